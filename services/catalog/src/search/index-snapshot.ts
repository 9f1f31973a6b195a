/**
 * The search index kept on disk between runs, so a restart loads it instead of analysing every tool
 * again: in the engine alone, 127,000 tools are a 136 MB file read back in 1.1 s where the rebuild
 * takes 12 s (test/bench/search-latency.ts); a restarted catalog of 100,000 tools answers search after
 * 3.9-5.2 s instead of 10.2-14.7 s (test/bench/catalog-scale.ts). Only an engine that lives in the process has one:
 * Meilisearch keeps its own index.
 *
 * The file is written when the catalog stops cleanly, and read on start. It records, beside the
 * engine's content, the version of every tool it holds (its revision, whether it had passed its
 * sunset date, and a digest of its service's indexed fields), so the start compares it with Postgres
 * and brings the changed, added and removed tools up to date: a snapshot of any age gives the same
 * index as a rebuild. A file that is missing, unreadable, written by other code or settings (its
 * key), or too far behind (over a quarter of the tools changed) is ignored and the index is rebuilt.
 *
 * Format: v8.serialize of SnapshotFile (typed arrays and Maps are written as they are, which is what
 * makes reading it fast); written to a temporary file, then renamed over the old one, so a crash while
 * writing leaves the previous file whole.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, rename, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import v8 from "node:v8";
import type { ServiceSearchFields } from "../store/search-sources.js";

/** Bumped when SnapshotFile's own shape changes (the engine's content is covered by the engine's key). */
const FORMAT = 1;

interface SnapshotFile {
  format: number;
  /** The engine's snapshot key: its code and settings (EmbeddedEngine.snapshotKey). */
  key: string;
  writtenAt: string;
  engine: unknown;
  /** Tool id -> toolVersion at the time its document was indexed. */
  versions: Map<string, string>;
}

export interface LoadedSnapshot {
  engine: unknown;
  versions: Map<string, string>;
  writtenAt: Date;
}

/** A digest of the service fields that go into its tools' documents (documentFor). */
export function serviceVersion(s: ServiceSearchFields): string {
  return createHash("sha1")
    .update(JSON.stringify([s.name, s.slug, s.summary, s.description, s.isDemo, s.status, s.visibility, s.organizationId]))
    .digest("base64url")
    .slice(0, 12);
}

/** What a tool's document depends on: its revision (bumped by every change), its sunset, its service. */
export function toolVersion(revision: bigint | string, sunset: boolean, service: string): string {
  return `${revision}:${sunset ? "s" : ""}:${service}`;
}

/**
 * Serializes now (synchronously: the engine's arrays are shared with the live index, so nothing may
 * change them before this returns), then writes the bytes. Returns their size.
 */
export async function writeSnapshot(file: string, key: string, engine: unknown, versions: Map<string, string>): Promise<number> {
  const content: SnapshotFile = { format: FORMAT, key, writtenAt: new Date().toISOString(), engine, versions };
  const bytes = v8.serialize(content);
  await mkdir(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    await writeFile(temporary, bytes, { mode: 0o600 });
    await rename(temporary, file);
  } catch (err) {
    await unlink(temporary).catch(() => {});
    throw err;
  }
  return bytes.length;
}

/** The snapshot in `file`, or why it cannot be used. */
export async function readSnapshot(file: string, key: string): Promise<LoadedSnapshot | { unusable: string }> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { unusable: code === "ENOENT" ? "no snapshot yet" : `cannot read it (${code ?? (err as Error).message})` };
  }
  let content: Partial<SnapshotFile>;
  try {
    content = v8.deserialize(bytes) as Partial<SnapshotFile>;
  } catch (err) {
    return { unusable: `not a snapshot (${(err as Error).message})` };
  }
  if (content?.format !== FORMAT) return { unusable: `written in format ${content?.format}, this build reads ${FORMAT}` };
  if (content.key !== key) return { unusable: "written by other search code or settings" };
  if (!(content.versions instanceof Map) || typeof content.writtenAt !== "string") return { unusable: "incomplete" };
  return { engine: content.engine, versions: content.versions, writtenAt: new Date(content.writtenAt) };
}
