/**
 * freePort (deploy/local/processes.mjs): vitest workers running side by side draw ports from slices
 * of their own, so two test files cannot both pick a port and find it free before either binds it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../../deploy/local/infra.mjs";

const ownPoolId = process.env.VITEST_POOL_ID;

async function portsAs(poolId: string | undefined, count: number): Promise<number[]> {
  if (poolId === undefined) delete process.env.VITEST_POOL_ID;
  else process.env.VITEST_POOL_ID = poolId;
  const ports: number[] = [];
  for (let i = 0; i < count; i++) ports.push(await freePort());
  return ports;
}

describe("freePort", () => {
  afterEach(() => {
    if (ownPoolId === undefined) delete process.env.VITEST_POOL_ID;
    else process.env.VITEST_POOL_ID = ownPoolId;
  });

  it("hands each worker (and the processes outside any) ports from a slice no other draws from", async () => {
    // 20000-32767 in four slices of 3192: slice 0 outside vitest's workers, 1-3 for VITEST_POOL_ID 1-3,
    // and a pool id past 3 wraps onto the workers' slices (4 onto 1), never onto slice 0.
    const slice = (k: number) => ({ min: 20_000 + k * 3192, max: 20_000 + (k + 1) * 3192 - 1 });
    const cases: Array<[string | undefined, number]> = [
      [undefined, 0],
      ["1", 1],
      ["2", 2],
      ["3", 3],
      ["4", 1],
    ];
    for (const [poolId, k] of cases) {
      const { min, max } = slice(k);
      for (const port of await portsAs(poolId, 40)) {
        expect(port, `pool id ${poolId}`).toBeGreaterThanOrEqual(min);
        expect(port, `pool id ${poolId}`).toBeLessThanOrEqual(max);
      }
    }
  });

  it("never hands out the same port twice in one process", async () => {
    const ports = await portsAs("2", 300);
    expect(new Set(ports).size).toBe(ports.length);
  });
});
