// The matching rules of protocol/vectors/README.md.

export class Mismatch extends Error {
  override name = "Mismatch";
}

export type Names = Record<string, unknown>;

const NAME = /\$\{([A-Za-z0-9_]+)\}/g;
const WHOLE_NAME = /^\$\{([A-Za-z0-9_]+)\}$/;
const ISO_TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

function lookup(names: Names, name: string): unknown {
  if (!(name in names)) throw new Mismatch(`\${${name}} was never captured`);
  return names[name];
}

/** `${name}` in strings; a string that is exactly `${name}` becomes the value with its JSON type. */
export function substitute(value: unknown, names: Names): any {
  if (Array.isArray(value)) return value.map((item) => substitute(item, names));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, names)]));
  }
  if (typeof value === "string") {
    const whole = WHOLE_NAME.exec(value);
    if (whole) return lookup(names, whole[1]!);
    return value.replace(NAME, (_, name: string) => String(lookup(names, name)));
  }
  return value;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function check(ok: boolean, expected: unknown, actual: unknown, where: string): void {
  if (!ok) throw new Mismatch(`at ${where}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * Throw `Mismatch` unless `actual` fits `expected`. JSON numbers parse to one
 * JavaScript type, so `1` and `1.0` cannot be told apart here (the Python
 * replayer checks that).
 */
export function match(expected: unknown, actual: unknown, names: Names, where = "$"): void {
  if (typeof expected === "string") {
    if (expected === "<any>") return;
    if (expected === "<string>") return check(typeof actual === "string", expected, actual, where);
    if (expected === "<integer>") return check(Number.isInteger(actual), expected, actual, where);
    if (expected === "<timestamp>") return check(typeof actual === "string" && ISO_TIMESTAMP.test(actual), expected, actual, where);
    if (expected.startsWith("<capture:") && expected.endsWith(">")) {
      names[expected.slice("<capture:".length, -1)] = actual;
      return;
    }
    const text = substitute(expected, names);
    if (typeof text === "string" && text.includes("<*>")) {
      const pattern = new RegExp("^" + text.split("<*>").map(escapeRegExp).join(".*") + "$", "s");
      return check(typeof actual === "string" && pattern.test(actual), text, actual, where);
    }
    if (typeof text !== "string") return match(text, actual, names, where);
    return check(text === actual, text, actual, where);
  }
  if (Array.isArray(expected)) {
    check(Array.isArray(actual) && actual.length === expected.length, expected, actual, where);
    expected.forEach((item, i) => match(item, (actual as unknown[])[i], names, `${where}[${i}]`));
    return;
  }
  if (isObject(expected)) {
    const keys = (o: object) => Object.keys(o).sort();
    check(isObject(actual) && JSON.stringify(keys(expected)) === JSON.stringify(keys(actual)), keys(expected), isObject(actual) ? keys(actual) : actual, where);
    for (const [key, item] of Object.entries(expected)) match(item, (actual as Record<string, unknown>)[key], names, `${where}.${key}`);
    return;
  }
  check(expected === actual, expected, actual, where);
}

export interface Step {
  comment?: string;
  send?: Record<string, any>;
  sendRaw?: string;
  framing?: "lsp" | "jsonl";
  expect?: Record<string, any>[];
}
