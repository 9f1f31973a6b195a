/** The compact Tool (compact.ts): each thing once, nothing a call needs lost. */
import { describe, expect, it } from "vitest";
import { compactTool } from "./compact.js";

const reliability = {
  window_days: 30,
  calls_7d: 4,
  calls_30d: 12,
  success_rate_30d: 0.75,
  p50_seconds: 0.4,
  p95_seconds: 1.2,
  last_success_at: "2026-11-27T10:00:00Z",
  last_failure_at: "2026-11-26T10:00:00Z",
  last_error_class: "upstream",
  last_error_type: "timeout",
  error_classes: { upstream: 3 },
  faults: {},
  auth_failures_30d: 0,
  caller_failures_30d: 0,
  danube_failures_30d: 0,
  upstream_failures_30d: 3,
  distinct_callers_30d: 2,
  flagged: false,
  refreshed_at: "2026-11-28T10:00:00Z",
};

const tool = {
  id: "t1",
  name: "DeleteFileSystem",
  slug: "fsx-delete-file-system",
  description: "Deletes a file system.",
  service_id: "s1",
  parameters: {
    FileSystemId: {
      name: "FileSystemId",
      location: "body",
      description: "",
      type: "string",
      required: true,
      json_schema: {
        allOf: [
          { type: "string", pattern: "^fs-[0-9a-f]{8,}$", description: "The file system's id." },
          { description: "Which one to delete." },
        ],
      },
    },
    Mode: {
      name: "Mode",
      location: "query",
      description: "How to delete.",
      type: "string",
      required: false,
      enum: ["soft", "hard"],
      default: "soft",
      json_schema: { type: "string", description: "How to delete.", enum: ["soft", "hard"], default: "soft" },
    },
    Limit: {
      name: "Limit",
      location: "query",
      description: "At most.",
      type: "integer",
      required: false,
      minimum: 1,
      maximum: 50,
    },
    Tags: {
      name: "Tags",
      location: "body",
      description: "Tags to keep.",
      type: "array",
      required: false,
      json_schema: {
        type: "array",
        title: "Tags",
        description: "Tags to keep.",
        items: { type: "string", description: "One tag." },
      },
    },
  },
  readiness: "needs_credential",
  configuration_url: "http://localhost:8080/console/services/s1/connect",
  reliability,
  deprecated: true,
  deprecation_message: "Use DeleteFileSystemV2.",
  sunset_date: null,
};

describe("compactTool", () => {
  it("keeps what a call needs once: descriptions, constraints, readiness, a short reliability and the deprecation", () => {
    expect(compactTool(tool)).toEqual({
      id: "t1",
      name: "DeleteFileSystem",
      service_id: "s1",
      description: "Deletes a file system.",
      parameters: {
        // The description inside allOf is the parameter's; the constraints stay with the schema.
        FileSystemId: {
          type: "string",
          required: true,
          description: "The file system's id.",
          schema: {
            allOf: [
              { type: "string", pattern: "^fs-[0-9a-f]{8,}$", description: "The file system's id." },
              { description: "Which one to delete." },
            ],
          },
        },
        Mode: {
          type: "string",
          required: false,
          description: "How to delete.",
          schema: { type: "string", enum: ["soft", "hard"], default: "soft" },
        },
        Limit: { type: "integer", required: false, description: "At most.", minimum: 1, maximum: 50 },
        Tags: {
          type: "array",
          required: false,
          description: "Tags to keep.",
          schema: { type: "array", items: { type: "string", description: "One tag." } },
        },
      },
      readiness: "needs_credential",
      configuration_url: "http://localhost:8080/console/services/s1/connect",
      reliability: { success_rate_30d: 0.75, calls_30d: 12, p50_seconds: 0.4 },
      deprecated: true,
      deprecation_message: "Use DeleteFileSystemV2.",
    });
  });

  it("leaves out what a ready, current, never-called tool does not need", () => {
    const plain = compactTool({
      ...tool,
      readiness: "ready",
      reliability: null,
      deprecated: false,
      deprecation_message: null,
      parameters: {},
    });
    expect(plain).toEqual({
      id: "t1",
      name: "DeleteFileSystem",
      service_id: "s1",
      description: "Deletes a file system.",
      parameters: {},
      readiness: "ready",
    });
    expect(compactTool({ ...tool, reliability: { ...reliability, calls_30d: 0 } })).not.toHaveProperty("reliability");
    expect(compactTool({ ...tool, reliability: { ...reliability, flagged: true } }).reliability).toMatchObject({ flagged: true });
  });
});
