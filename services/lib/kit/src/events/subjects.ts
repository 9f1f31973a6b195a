/**
 * NATS names: the stream and the subjects a deployment uses (NATS_NAMESPACE), and the subjects code names.
 * Part of `@toolport/kit/events`, whose header says how events work.
 */
/**
 * Where one deployment's events live on a NATS server: its stream, and the subjects on the wire. Code
 * names subjects without the namespace (Subjects); the relay adds it when publishing, a consumer adds it to
 * its filter and takes it off what it receives. Deployments or test stacks sharing one server each give
 * a namespace (NATS_NAMESPACE), so each has a stream and subjects of its own: none receives another's
 * events, and a new one does not replay another's history. Without one: stream TOOLPORT, `toolport.>`.
 */
export interface NatsNames {
  stream: string;
  /** The subject on the wire for a subject of Subjects (or a filter with wildcards). */
  wire(subject: string): string;
  /** The subject as code names it, for a subject received on the wire. */
  logical(wireSubject: string): string;
}

/** Letters, digits, _ and - (a NATS subject token and a stream name's part); not `toolport`, whose subjects would overlap the default stream's. */
export const NATS_NAMESPACE_PATTERN = /^(?!toolport$)[A-Za-z0-9_-]{0,32}$/;

export function natsNames(namespace = ""): NatsNames {
  if (!NATS_NAMESPACE_PATTERN.test(namespace))
    throw new Error(`NATS namespace ${JSON.stringify(namespace)}: up to 32 letters, digits, _ and -, and not "toolport"`);
  if (!namespace) return { stream: "TOOLPORT", wire: (s) => s, logical: (s) => s };
  const prefix = `${namespace}.`;
  return {
    stream: `TOOLPORT_${namespace}`,
    wire: (s) => prefix + s,
    logical: (s) => (s.startsWith(prefix) ? s.slice(prefix.length) : s),
  };
}

let names = natsNames();

/** This process's namespace (NATS_NAMESPACE). Set once by startService, before the stream, relay and consumers. */
export function setNatsNamespace(namespace: string): void {
  names = natsNames(namespace);
}

/** The stream and wire subjects of this process's namespace. */
export function currentNatsNames(): NatsNames {
  return names;
}

/** Every subject the system publishes, named once. */
export const Subjects = {
  executionCompleted: "toolport.execution.completed",
  executionFailed: "toolport.execution.failed",
  workflowCompleted: "toolport.workflow.completed",
  workflowFailed: "toolport.workflow.failed",
  spendLimitApproaching: "toolport.spend.limit_approaching",
  catalogToolChanged: "toolport.catalog.tool.changed",
} as const;
