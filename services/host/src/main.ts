#!/usr/bin/env node
/**
 * `toolport`: sizes the heap from the memory the process is given (heap-limit.ts), then runs the roles
 * (run.ts). Loaded first and alone, so the process that only re-executes itself loads nothing else.
 */
import { sizeHeapThenRun } from "./heap-limit.js";

await sizeHeapThenRun(() => import("./run.js"));
