/** The agent types a key can name (the API's enum), with the words the console shows for them. */
import type { components } from "../api";

export type AgentType = NonNullable<components["schemas"]["ApiKey"]["agent_type"]>;

export const AGENT_TYPES: { value: AgentType; label: string }[] = [
  { value: "coding_agent", label: "Coding agent" },
  { value: "assistant", label: "Assistant" },
  { value: "workflow", label: "Workflow" },
  { value: "service", label: "Service" },
  { value: "other", label: "Other" },
];

export const agentTypeLabel = (type: string | null | undefined): string =>
  AGENT_TYPES.find((t) => t.value === type)?.label ?? "type not given";
