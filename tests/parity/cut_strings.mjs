// Strings cut inside emoji, as an agent cuts tool output ("😀".slice(0, 1)), in requests written by
// Node's own JSON.stringify: what a plain Node client sends a sidecar.
//
// stdin: {"requests": [request, ...]} where any string may hold "<cut:NAME>" markers, each replaced
// here by the JavaScript string CUTS[NAME].
// stdout: {"cuts": {NAME: JSON.stringify(string)}, "lines": [JSON.stringify(request), ...]}: each line is
// sent as a frame's body byte for byte; each cut is the JSON text Node writes for that string.
import { readFileSync } from "node:fs";

const emoji = "😀"; // U+1F600: the pair \ud83d\ude00
const CUTS = {
  high: emoji.slice(0, 1), // a lone high surrogate
  low: emoji.slice(1), // a lone low surrogate
  cutEnd: "tool output 😀😀".slice(0, -1), // cut before the last emoji's low half
  cutStart: "😀 tail".slice(1), // starts with a low half
  reversed: emoji[1] + emoji[0], // two lone halves in the wrong order
  rejoined: emoji.slice(0, 1) + emoji.slice(1), // the two halves joined again: the emoji itself
};

const fill = (value) => {
  if (typeof value === "string") return value.replace(/<cut:(\w+)>/g, (_, name) => CUTS[name]);
  if (Array.isArray(value)) return value.map(fill);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [fill(key), fill(item)]));
  }
  return value;
};

const { requests } = JSON.parse(readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify({
  cuts: Object.fromEntries(Object.entries(CUTS).map(([name, text]) => [name, JSON.stringify(text)])),
  lines: requests.map((request) => JSON.stringify(fill(request))),
}));
