import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { Continuations, parseInputResponses, type UpstreamResume } from "./continuation.js";

const continuations = new Continuations(randomBytes(32));
const subject = { subject: "key-1", toolId: "tool-1", input: { restaurant: "Chez Nous", seats: 4 } };
const resume: UpstreamResume = { kind: "state", requestState: "opaque", keys: ["confirm"] };
const accept = { confirm: { action: "accept" as const, content: { confirm: true } } };

describe("continuations", () => {
  it("verify for the same caller, tool and input (in any key order), and give back what to resume", () => {
    const { token } = continuations.issue(subject, resume);
    const check = continuations.verify(
      { continuation: token, answers: accept },
      { ...subject, input: { seats: 4, restaurant: "Chez Nous" } },
    );
    expect(check).toMatchObject({ ok: true, resume });
  });

  it("are bound to the caller, the tool, the exact input and the questions asked", () => {
    const { token } = continuations.issue(subject, resume);
    const verify = (expected: typeof subject, answers: Record<string, { action: "accept" | "decline" }> = accept) =>
      continuations.verify({ continuation: token, answers }, expected);
    expect(verify({ ...subject, subject: "key-2" })).toEqual({ ok: false, problem: "other_caller" });
    expect(verify({ ...subject, toolId: "tool-2" })).toEqual({ ok: false, problem: "other_tool" });
    expect(verify({ ...subject, input: { restaurant: "Chez Nous", seats: 5 } })).toEqual({ ok: false, problem: "input_changed" });
    expect(verify(subject, { other: { action: "decline" } })).toEqual({ ok: false, problem: "unknown_answer" });
  });

  it("refuse an altered, foreign or expired continuation", () => {
    const { token } = continuations.issue(subject, resume);
    const [prefix, body, signature] = token.split(".") as [string, string, string];
    const payload = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
    payload.up.requestState = "forged";
    const forged = `${prefix}.${Buffer.from(JSON.stringify(payload)).toString("base64url")}.${signature}`;
    expect(continuations.verify({ continuation: forged, answers: accept }, subject)).toEqual({ ok: false, problem: "invalid" });
    const foreign = new Continuations(randomBytes(32)).issue(subject, resume).token;
    expect(continuations.verify({ continuation: foreign, answers: accept }, subject)).toEqual({ ok: false, problem: "invalid" });
    const old = continuations.issue(subject, resume, new Date(Date.now() - 601_000)).token;
    expect(continuations.verify({ continuation: old, answers: accept }, subject)).toEqual({ ok: false, problem: "expired" });
  });

  it("of a question waiting in the process expire with it", () => {
    const expiresAt = Date.now() + 300_000;
    const issued = continuations.issue(subject, { kind: "pending", id: "p-1", keys: ["elicitation"], expiresAt });
    expect(Math.abs(issued.expiresAt.getTime() - expiresAt)).toBeLessThan(1000);
  });
});

describe("input_responses", () => {
  it("parse the answers, keeping content only with accept", () => {
    expect(
      parseInputResponses({
        continuation: "ic1.x.y",
        answers: { a: { action: "accept", content: { confirm: true } }, b: { action: "decline", content: { x: 1 } } },
      }),
    ).toEqual({
      continuation: "ic1.x.y",
      answers: { a: { action: "accept", content: { confirm: true } }, b: { action: "decline" } },
    });
  });

  it("say what is wrong with a malformed value", () => {
    expect(parseInputResponses([])).toMatch(/must be an object/);
    expect(parseInputResponses({ answers: {} })).toMatch(/continuation/);
    expect(parseInputResponses({ continuation: "c", answers: [] })).toMatch(/answers/);
    expect(parseInputResponses({ continuation: "c", answers: { a: { action: "yes" } } })).toMatch(/answers\.a\.action/);
    expect(parseInputResponses({ continuation: "c", answers: { a: { action: "accept", content: "yes" } } })).toMatch(
      /answers\.a\.content/,
    );
  });
});
