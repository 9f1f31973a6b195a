/**
 * Services by id, for screens that show tools of several services (search results, the key's allow-list
 * picker): the catalog may hold thousands of services, so none reads them all; each service shown is read
 * once (`GET /v1/services/public/{id}`, or for one of the organization's own private services, which that
 * does not show, `GET /v1/services/{id}`) and kept for the visit, and a page of services read for another
 * reason (the catalog's list) fills the same cache.
 */
import { type QueryClient, useQueries } from "@tanstack/react-query";
import { ApiError, type components, unwrap } from "../api";
import { useSession } from "../session";

type Service = components["schemas"]["Service"];

/** A service's name changes rarely: read once, kept for the visit. */
const SERVICE_STALE_MS = 30 * 60_000;

const publicServiceKey = (id: string) => ["public-service", id] as const;

/** Services already read (a page of a list) spare their own request later. */
export function rememberServices(queryClient: QueryClient, services: readonly Service[]): void {
  for (const s of services) queryClient.setQueryData(publicServiceKey(s.id), s);
}

/** The names of the services `ids` (a handful: those of the tools shown); one not read (yet) is absent. */
export function useServiceNames(ids: readonly string[]): Map<string, string> {
  const { api } = useSession();
  const distinct = [...new Set(ids)];
  const services = useQueries({
    queries: distinct.map((id) => ({
      queryKey: publicServiceKey(id),
      staleTime: SERVICE_STALE_MS,
      queryFn: async (): Promise<Service> => {
        try {
          return await unwrap(api.GET("/v1/services/public/{service_id}", { params: { path: { service_id: id } } }));
        } catch (err) {
          if (!(err instanceof ApiError && err.status === 404)) throw err;
          const own = await unwrap(api.GET("/v1/services/{service_id}", { params: { path: { service_id: id } } }));
          if (!own.service) throw err;
          return own.service;
        }
      },
    })),
  });
  const names = new Map<string, string>();
  services.forEach((s, i) => {
    const id = distinct[i];
    if (id !== undefined && s.data) names.set(id, s.data.name);
  });
  return names;
}
