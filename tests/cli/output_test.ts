import assert from "node:assert/strict";
import { errorLine, type Io, progressLine } from "../../src/cli/output.ts";

function recorder(errIsTerminal: boolean, color = false): Io & { text: () => string } {
  let err = "";
  return {
    out: () => {},
    err: (t) => {
      err += t;
    },
    errIsTerminal,
    color,
    text: () => err,
  };
}

Deno.test("progress: \\r lines on a terminal, ended by a newline; nothing elsewhere or when disabled", () => {
  const tty = recorder(true);
  const p = progressLine(tty);
  p.update("tested 1/2 samples");
  p.update("tested 2/2 samples");
  p.done();
  assert.equal(tty.text(), "\rtested 1/2 samples\rtested 2/2 samples\n");

  const quiet = recorder(true);
  const q = progressLine(quiet, false);
  q.update("x");
  q.done();
  assert.equal(quiet.text(), "");

  const pipe = recorder(false);
  const r = progressLine(pipe);
  r.update("x");
  r.done();
  assert.equal(pipe.text(), "");

  const none = recorder(true);
  progressLine(none).done(); // nothing shown: no newline either
  assert.equal(none.text(), "");
});

Deno.test("error line: red only when colour is on", () => {
  assert.equal(errorLine(recorder(true, false), "bad"), "error: bad\n");
  assert.equal(errorLine(recorder(true, true), "bad"), "\x1b[31merror:\x1b[0m bad\n");
});
