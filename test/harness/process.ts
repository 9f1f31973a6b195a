/** A child process the test starts and reads: what it wrote so far (stdout and stderr) and how it ended. */
import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";

export interface Started {
  child: ChildProcess;
  /** Everything it wrote so far, stdout and stderr interleaved as they arrived. */
  output(): string;
  /** Its exit code (null when a signal ended it). */
  exited: Promise<number | null>;
}

export function startProcess(command: string, args: string[], options: SpawnOptions): Started {
  const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
  let text = "";
  child.stdout?.on("data", (d: Buffer) => {
    text += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    text += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, output: () => text, exited };
}
