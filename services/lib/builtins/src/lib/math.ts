/**
 * Arithmetic expressions by recursive descent; never eval or Function.
 *
 *   expression := term (("+" | "-") term)*
 *   term       := unary (("*" | "/" | "%") unary)*
 *   unary      := ("-" | "+") unary | power
 *   power      := primary ("^" unary)?          right-associative; binds tighter than a leading minus,
 *                                               so -2^2 = -4 and 2^-1 = 0.5
 *   primary    := number | constant | function "(" expression ("," expression)* ")" | "(" expression ")"
 *
 * Limits: MAX_LENGTH characters and MAX_DEPTH nesting (parentheses, unary signs, powers, calls), checked
 * before any work, so a hostile expression is refused in microseconds.
 */
import { BuiltinInputError } from "../types.js";

export const MAX_LENGTH = 1_000;
export const MAX_DEPTH = 50;

const CONSTANTS: Record<string, number> = { pi: Math.PI, e: Math.E, tau: 2 * Math.PI };

type Fn = { min: number; max: number; apply: (args: number[]) => number };
const unary = (f: (x: number) => number): Fn => ({ min: 1, max: 1, apply: ([x]) => f(x!) });
const FUNCTIONS: Record<string, Fn> = {
  sqrt: unary(Math.sqrt),
  abs: unary(Math.abs),
  floor: unary(Math.floor),
  ceil: unary(Math.ceil),
  sin: unary(Math.sin),
  cos: unary(Math.cos),
  tan: unary(Math.tan),
  exp: unary(Math.exp),
  ln: unary(Math.log),
  log10: unary(Math.log10),
  /** log(x) is the natural logarithm; log(x, b) is to base b. */
  log: { min: 1, max: 2, apply: ([x, base]) => (base === undefined ? Math.log(x!) : Math.log(x!) / Math.log(base)) },
  /** round(x) to an integer (halves away from zero); round(x, n) to n decimal places (0 to 15). */
  round: {
    min: 1,
    max: 2,
    apply: ([x, places = 0]) => {
      if (!Number.isInteger(places) || places < 0 || places > 15)
        throw new BuiltinInputError("round: places must be an integer from 0 to 15");
      const factor = 10 ** places;
      return (Math.sign(x!) * Math.round(Math.abs(x!) * factor)) / factor;
    },
  },
  min: { min: 1, max: 100, apply: (args) => Math.min(...args) },
  max: { min: 1, max: 100, apply: (args) => Math.max(...args) },
};

type Token =
  | { kind: "number"; value: number; at: number }
  | { kind: "name"; value: string; at: number }
  | { kind: "op"; value: string; at: number };

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    if (c === " " || c === "\t" || c === "\n") {
      i++;
    } else if (/[0-9.]/.test(c)) {
      const match = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?/.exec(source.slice(i, i + 64));
      if (!match) throw new BuiltinInputError(`expression: malformed number at character ${i + 1}`);
      tokens.push({ kind: "number", value: Number(match[0]), at: i });
      i += match[0].length;
    } else if (/[A-Za-z_]/.test(c)) {
      let end = i;
      while (end < source.length && /[A-Za-z0-9_]/.test(source[end]!)) end++;
      tokens.push({ kind: "name", value: source.slice(i, end).toLowerCase(), at: i });
      i = end;
    } else if ("+-*/%^(),".includes(c)) {
      tokens.push({ kind: "op", value: c, at: i });
      i++;
    } else if (c === "×" || c === "÷") {
      tokens.push({ kind: "op", value: c === "×" ? "*" : "/", at: i });
      i++;
    } else {
      throw new BuiltinInputError(
        `expression: unexpected "${c}" at character ${i + 1}; use numbers, + - * / % ^, parentheses and functions`,
      );
    }
  }
  return tokens;
}

class Parser {
  private position = 0;
  private depth = 0;

  constructor(
    private readonly tokens: Token[],
    private readonly source: string,
  ) {}

  parse(): number {
    if (this.tokens.length === 0) throw new BuiltinInputError("expression: is empty");
    const value = this.expression();
    const extra = this.peek();
    if (extra) this.fail(`unexpected "${this.source.slice(extra.at, extra.at + 10)}"`, extra);
    return value;
  }

  private expression(): number {
    let value = this.term();
    for (let op = this.peekOp("+", "-"); op; op = this.peekOp("+", "-")) {
      this.position++;
      const right = this.term();
      value = op === "+" ? value + right : value - right;
    }
    return value;
  }

  private term(): number {
    let value = this.unary();
    for (let op = this.peekOp("*", "/", "%"); op; op = this.peekOp("*", "/", "%")) {
      const token = this.tokens[this.position++]!;
      const right = this.unary();
      if ((op === "/" || op === "%") && right === 0) this.fail(op === "/" ? "division by zero" : "modulo by zero", token);
      value = op === "*" ? value * right : op === "/" ? value / right : value % right;
    }
    return value;
  }

  private unary(): number {
    const sign = this.peekOp("+", "-");
    if (!sign) return this.power();
    this.position++;
    return this.nested(() => (sign === "-" ? -this.unary() : this.unary()));
  }

  private power(): number {
    const base = this.primary();
    if (!this.peekOp("^")) return base;
    this.position++;
    return this.nested(() => base ** this.unary());
  }

  private primary(): number {
    const token = this.tokens[this.position++];
    if (!token) return this.fail("ends too early; an operand is missing");
    if (token.kind === "number") return token.value;
    if (token.kind === "op" && token.value === "(") {
      const value = this.nested(() => this.expression());
      this.expect(")", "a closing parenthesis is missing");
      return value;
    }
    if (token.kind === "name") {
      if (token.value in CONSTANTS && !this.peekOp("(")) return CONSTANTS[token.value]!;
      const fn = FUNCTIONS[token.value];
      if (!fn)
        return this.fail(
          `unknown name "${token.value}"; functions: ${Object.keys(FUNCTIONS).join(", ")}; constants: pi, e, tau`,
          token,
        );
      this.expect("(", `${token.value} needs its arguments in parentheses`);
      const args = this.nested(() => {
        const list = [this.expression()];
        while (this.peekOp(",")) {
          this.position++;
          list.push(this.expression());
        }
        return list;
      });
      this.expect(")", "a closing parenthesis is missing");
      if (args.length < fn.min || args.length > fn.max) {
        this.fail(
          `${token.value} takes ${fn.min === fn.max ? fn.min : `${fn.min} to ${fn.max}`} argument(s), not ${args.length}`,
          token,
        );
      }
      return fn.apply(args);
    }
    return this.fail(`unexpected "${token.value}"`, token);
  }

  private nested<T>(inner: () => T): T {
    if (++this.depth > MAX_DEPTH) this.fail(`nests deeper than ${MAX_DEPTH} levels`);
    const value = inner();
    this.depth--;
    return value;
  }

  private peek(): Token | undefined {
    return this.tokens[this.position];
  }

  private peekOp(...ops: string[]): string | undefined {
    const token = this.peek();
    return token?.kind === "op" && ops.includes(token.value) ? token.value : undefined;
  }

  private expect(op: string, why: string): void {
    if (!this.peekOp(op)) this.fail(why, this.peek());
    this.position++;
  }

  private fail(why: string, token?: Token): never {
    throw new BuiltinInputError(`expression: ${why}${token ? ` at character ${token.at + 1}` : ""}`);
  }
}

/** The value of `source`, or a BuiltinInputError saying what is wrong and where. */
export function evaluate(source: string): number {
  if (source.length > MAX_LENGTH) throw new BuiltinInputError(`expression: longer than ${MAX_LENGTH} characters`);
  const value = new Parser(tokenize(source), source).parse();
  if (Number.isNaN(value))
    throw new BuiltinInputError(
      "expression: has no finite real-number result (e.g. sqrt or log of a negative number, or an overflow along the way)",
    );
  if (!Number.isFinite(value)) throw new BuiltinInputError("expression: the result is infinite or too large (beyond ±1.8e308)");
  return value;
}
