// Scoring off the main thread: a 512-site match runs in the scoring worker, the page says
// "matching…" meanwhile and still answers a click within 100 ms; only the latest answer counts;
// a browser that cannot load the worker is told so.
import { test } from "node:test";
import assert from "node:assert/strict";
import { usePlayground, launchBrowser, saveFailure } from "../harness.mjs";

const session = usePlayground();
const check = session.check;

const ROCK_SALT = `NaCl conventional cell
1.0
5.64 0 0
0 5.64 0
0 0 5.64
Na Cl
4 4
Direct
0 0 0
0 0.5 0.5
0.5 0 0.5
0.5 0.5 0
0.5 0.5 0.5
0.5 0 0
0 0.5 0
0 0 0.5
`;

/** The answer's CIF with every atom moved by up to `d` (fractional) along each axis, by a
 * fixed pseudo-random sequence: a real search for the matcher (seconds), not the quick
 * confirmation of an identical copy. */
function perturbSites(answer, d, seed = 1) {
  let x = seed;
  const next = () => ((x = (x * 1103515245 + 12345) % 2147483648) / 2147483648) * 2 - 1;
  const lines = answer.split("\n");
  const loop = lines.findIndex((l) => l.trim() === "_atom_site_occupancy");
  assert.ok(loop > 0, "the answer's CIF has an atom-site loop");
  for (let i = loop + 1; i < lines.length && /^\s*[A-Z][a-z]?\s/.test(lines[i]); i++) {
    const fields = lines[i].trim().split(/\s+/);
    for (const k of [3, 4, 5]) fields[k] = (Number(fields[k]) + d * next()).toFixed(8);
    lines[i] = "  " + fields.join("  ");
  }
  return lines.join("\n");
}

/** The answer with the elements of its first Na and first Cl rows swapped: the counts still
 * agree, but no translation fits, so the matcher searches them all and then explains the
 * mismatch by the closest match. */
function swapFirstSites(answer) {
  let na = false;
  let cl = false;
  return answer.split("\n").map((l) => {
    if (!na && /^\s*Na\s+Na/.test(l)) { na = true; return l.replace(/^(\s*)Na(\s+)Na/, "$1Cl$2Cl"); }
    if (!cl && /^\s*Cl\s+Cl/.test(l)) { cl = true; return l.replace(/^(\s*)Cl(\s+)Cl/, "$1Na$2Na"); }
    return l;
  }).join("\n");
}

test("a 512-site match runs in the worker: 'matching…' is shown and a click is handled within 100 ms", () =>
  check("worker responsiveness", async () => {
    const page = session.browser.page;
    // Rock salt's 8-site conventional cell, pasted, as a 4×4×4 supercell: a 512-site target.
    if (!(await page.locator("#cif-paste").isVisible())) await page.locator("details.paste summary").click();
    await page.fill("#cif-paste", ROCK_SALT);
    await page.click("#use-pasted");
    await page.waitForFunction(() => document.querySelector("#input-name").textContent.includes("POSCAR (8 sites)"));
    await page.selectOption("#action-kind", "super_cell");
    await page.waitForFunction(() => document.querySelector("#action-prompt").value.startsWith("Create a supercell"));
    const size = page.locator("#action-form [data-param=size] input");
    await size.waitFor();
    await size.fill("4, 4, 4");
    await size.dispatchEvent("change");
    await page.waitForFunction(() => /ground truth, 512 sites/.test(document.body.textContent));

    // First the ground truth with every atom moved a little (Success): this starts the
    // worker and reads the target, so what runs during the click below is the match itself.
    await page.click("#paste-truth");
    const truth = await page.inputValue("#answer");
    await page.fill("#answer", perturbSites(truth, 0.002));
    await page.locator("#large-target").waitFor();
    assert.equal(await page.locator("#verdict").count(), 0, "no verdict before the click");
    let started = Date.now();
    await page.click("#evaluate-large");
    await page.waitForSelector("#verdict[data-label=Success]", { timeout: 60_000 });
    console.log(`[worker] first 512-site verdict (worker start, target read, match): ${Date.now() - started} ms`);

    // Then the same with one Na and one Cl swapped: no translation fits, the matcher searches
    // them all and explains the mismatch by the closest match.
    await page.fill("#answer", swapFirstSites(perturbSites(truth, 0.002)));
    await page.locator("#large-target").waitFor();

    // A probe: the time from a click on "Got it" (the first-visit line, handled by the app)
    // to the line's removal, and whether the match was still running then.
    await page.evaluate(() => {
      window.__probe = new Promise((resolve) => {
        const button = document.querySelector("#first-visit-dismiss");
        button.addEventListener("click", (e) => {
          const clicked = e.timeStamp;
          const seen = () => {
            if (document.querySelector("#first-visit")) return false;
            resolve({ ms: performance.now() - clicked, matching: !!document.querySelector("#matching") });
            return true;
          };
          if (!seen()) new MutationObserver((_, o) => seen() && o.disconnect()).observe(document.body, { childList: true, subtree: true });
        });
      });
    });
    started = Date.now();
    await page.click("#evaluate-large");
    await page.locator("#matching").waitFor({ timeout: 5_000 });
    assert.match(await page.locator("#matching").textContent(), /matching/);
    await page.click("#first-visit-dismiss", { timeout: 5_000 });
    const probe = await page.evaluate(() => window.__probe);
    console.log(`[worker] click handled in ${probe.ms.toFixed(1)} ms while matching: ${probe.matching}`);
    assert.ok(probe.matching, "the match was still running when the click was handled");
    assert.ok(probe.ms < 100, `the click took ${probe.ms} ms to be handled`);

    await page.locator("#verdict").waitFor({ timeout: 120_000 });
    const label = await page.locator("#verdict").getAttribute("data-label");
    console.log(`[worker] 512-site match with no fit: ${label} after ${Date.now() - started} ms`);
    assert.equal(await page.locator("#matching").count(), 0, "the note goes once the verdict is in");
    assert.equal(label, "StructureMismatch", "Na and Cl swapped: the same composition, no fit");
  }));

test("only the latest answer's verdict is shown: a newer answer replaces a running match", () =>
  check("worker stale results", async () => {
    const page = session.browser.page;
    // Still on the 512-site target: start a slow match (no fit), then paste the input
    // (another element count) while it runs; the slow match's verdict must never appear.
    await page.click("#paste-truth");
    const truth = await page.inputValue("#answer");
    await page.fill("#answer", swapFirstSites(perturbSites(truth, 0.002, 7)));
    const started = Date.now();
    await page.click("#evaluate-large");
    await page.locator("#matching").waitFor({ timeout: 5_000 });
    console.log(`[worker] matching shown after ${Date.now() - started} ms`);
    await page.click("#paste-input");
    await page.locator("#large-target").waitFor();
    await page.click("#evaluate-large");
    await page.locator("#verdict").waitFor({ timeout: 60_000 });
    assert.equal(await page.locator("#verdict").getAttribute("data-label"), "AtomCountMismatch");
    // Give a stale answer time to arrive: the verdict stays the latest one.
    await page.waitForTimeout(3_000);
    assert.equal(await page.locator("#verdict").getAttribute("data-label"), "AtomCountMismatch");
    assert.equal(await page.locator("#matching").count(), 0);
  }));

test("a browser whose scoring worker cannot load says so where the verdict would be", async () => {
  // The worker's script refused (its console then reports that: not this test's concern).
  const blocked = await launchBrowser();
  try {
    const page = blocked.page;
    await page.route(/\/matcher_loader\.js$/, (route) => route.abort());
    await page.goto(session.server.url + "/");
    await page.waitForSelector("ul.legend[data-for=viewer] li");
    // The first structure's space group needs no worker: it comes from the pool's table.
    assert.equal(await page.locator("#space-group").textContent(), "F m -3 m (225)");
    await page.click("#paste-truth");
    const failure = page.locator("#scoring-failed");
    await failure.waitFor({ timeout: 30_000 });
    assert.match(await failure.textContent(), /cannot be scored in this browser: its worker did not load/);
    assert.equal(await page.locator("#verdict").count(), 0);
    assert.equal(await page.locator("#matching").count(), 0, "nothing claims to be matching");
  } catch (e) {
    e.message += `\n(screenshot: ${await saveFailure(blocked.page, "worker blocked")})`;
    throw e;
  } finally {
    await blocked.close();
  }
});

test("the scoring worker starts loading when a person turns to the answer, before any verdict", () =>
  check("worker warm", async () => {
    const fresh = await launchBrowser();
    try {
      const page = fresh.page;
      const fetched = [];
      page.on("request", (r) => fetched.push(new URL(r.url()).pathname));
      await page.goto(session.server.url + "/");
      await page.waitForSelector("ul.legend[data-for=viewer] li");
      await page.waitForTimeout(500);
      assert.ok(!fetched.some((p) => p.endsWith("matcher_bg.wasm")), "a first visit does not fetch the worker");
      await page.hover("#answer");
      const started = Date.now();
      while (!fetched.some((p) => p.endsWith("matcher_bg.wasm"))) {
        assert.ok(Date.now() - started < 10_000, `no worker fetched after hovering the answer: ${fetched.join(" ")}`);
        await page.waitForTimeout(50);
      }
      assert.equal(await page.locator("#verdict").count(), 0, "nothing was scored");
    } finally {
      await fresh.close();
    }
  }));
