// Asking a configured model through the server, and share links that reproduce a case.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser, withScreenshot, fakeProvider } from "../harness.mjs";

const KEY = "sk-e2e-SECRET-4242";
let provider;
let server;
let browser;

before(async () => {
  provider = await fakeProvider("Sure.\n<cif>\ndata_broken\n_cell_length_a 1\n</cif>");
  server = await startServer({
    configToml: `[[models]]\nname = "fake-gpt"\nprovider = "openai-compatible"\nmodel = "f"\nbase_url = "${provider.baseUrl}"\napi_key_env = "E2E_FAKE_KEY"\nprice_input_per_mtok = 1.0\nprice_output_per_mtok = 2.0\n[[models]]\nname = "dead-gpt"\nprovider = "openai-compatible"\nmodel = "d"\nbase_url = "http://127.0.0.1:9/v1"\n`,
    // Debug logging, so that the log check below sees everything the server writes.
    env: { E2E_FAKE_KEY: KEY, RUST_LOG: "debug" },
  });
  browser = await launchBrowser();
  await browser.page.goto(server.url + "/");
  await browser.page.waitForSelector("ul.legend[data-for=viewer] li");
});

after(async () => {
  await browser?.close();
  await server?.stop();
  await provider?.close();
});

const check = (name, fn) => withScreenshot(browser.page, name, fn);

test("ask a configured model: answer, tokens, cost and verdict appear; the key stays on the server", () =>
  check("ask model", async () => {
    const page = browser.page;
    await page.waitForSelector("#model-select option[value=fake-gpt]", { state: "attached" });
    await page.selectOption("#model-select", "fake-gpt");
    await page.click("#ask-model");
    await page.waitForFunction(() => document.querySelector("#ask-status").textContent.includes("tokens"));
    assert.match(await page.locator("#ask-status").textContent(), /1200 prompt \+ 300 answer tokens · \$0\.0018/);
    assert.match(await page.inputValue("#answer"), /data_broken/);
    assert.equal(await page.locator("#verdict").getAttribute("data-label"), "CifParsingError");
    // The provider got the exact model prompt and the key; the page never saw the key.
    const sent = JSON.parse(provider.requests.at(-1).body);
    assert.ok(sent.messages[0].content.startsWith("You are a CIF operation assistant."));
    assert.equal(sent.stream, true, "the page asks for a streamed answer");
    assert.equal(provider.requests.at(-1).headers.authorization, `Bearer ${KEY}`);
    assert.ok(!(await page.content()).includes(KEY));
  }));

test("a streamed answer grows in the page; cancelling keeps the part received and stops the provider call", () =>
  check("cancel stream", async () => {
    const page = browser.page;
    provider.pieceDelayMs = 400;
    try {
      await page.selectOption("#model-select", "fake-gpt");
      await page.click("#random"); // a new prompt, so the answer is not served from the cache
      await page.click("#ask-model");
      await page.waitForFunction(() => document.querySelector("#answer").value.length >= 8);
      assert.match(await page.locator("#ask-status").textContent(), /receiving… \d+ characters/);
      await page.click("#cancel-ask");
      await page.waitForFunction(() => document.querySelector("#ask-status").textContent.includes("Cancelled"));
      const partial = await page.inputValue("#answer");
      assert.ok(partial.length >= 8 && partial.length < 40, `partial answer kept: ${JSON.stringify(partial)}`);
      assert.ok("Sure.\n<cif>\ndata_broken".startsWith(partial.slice(0, 8)));
      // The server dropped the provider's stream when the page hung up.
      for (let i = 0; i < 50 && provider.closed === 0; i++) await new Promise((r) => setTimeout(r, 100));
      assert.equal(provider.closed, 1);
      assert.equal(await page.locator("#cancel-ask").count(), 0);
    } finally {
      provider.pieceDelayMs = 20;
    }
  }));

test("a share link reopens the same case with the same verdict", () =>
  check("share link", async () => {
    const page = browser.page;
    // Not the default action: the link must bring its Action selector with it.
    await page.selectOption("#action-kind", "swap");
    await page.click("#random");
    await page.click("#paste-truth");
    // Perturb one coordinate so the verdict has non-trivial numbers.
    const answer = (await page.inputValue("#answer")).replace(/(\d\.\d{8})(\s+1(?:\.0)?\n)/, (m, x, rest) => `${(Number(x) + 0.01).toFixed(8)}${rest}`);
    await page.fill("#answer", answer);
    const label = await page.locator("#verdict").getAttribute("data-label");
    const detail = await page.locator("#verdict .detail").textContent();
    assert.doesNotMatch(await page.locator("#max-dist").textContent(), /^0\.0000$/, "a perturbed answer");
    const prompt = await page.inputValue("#action-prompt");
    const seed = await page.inputValue("#seed");
    await page.click("#share");
    const link = await page.inputValue("#share-link");
    assert.ok(link.includes("#case="), link);
    // A fresh browser (its own profile) opens the link and recomputes the same verdict.
    const fresh = await launchBrowser();
    try {
      await fresh.page.goto(link);
      await fresh.page.waitForSelector("#verdict");
      assert.equal(await fresh.page.inputValue("#action-prompt"), prompt);
      assert.equal(await fresh.page.inputValue("#seed"), seed, "the seed travels with the case");
      assert.equal(await fresh.page.locator("#verdict").getAttribute("data-label"), label);
      assert.equal(await fresh.page.locator("#verdict .detail").textContent(), detail);
      assert.equal(await fresh.page.inputValue("#action-kind"), "swap", "the Action selector is restored");

      // The short link: the same case from the server's store, at /c/<id>.
      await page.click("#short-link");
      await page.waitForFunction(() => /\/c\/[0-9a-f]{12}$/.test(document.querySelector("#share-link").value));
      const short = await page.inputValue("#share-link");
      await fresh.page.goto(short);
      await fresh.page.waitForSelector("#verdict");
      assert.equal(await fresh.page.inputValue("#action-prompt"), prompt);
      assert.equal(await fresh.page.locator("#verdict .detail").textContent(), detail);
      await fresh.page.goto(server.url + "/c/000000000000");
      await fresh.page.waitForSelector("#broken-link");
      assert.match(await fresh.page.locator("#broken-link-detail").textContent(), /no shared case '000000000000'/);
      assert.equal(await fresh.page.locator("#viewer").count(), 0, "no default task under a broken link");
    } finally {
      await fresh.close();
    }
    // A damaged link: said at the top in plain words, no default task under it; the
    // technical reason only on request.
    const third = await browser.context.newPage();
    await third.goto(server.url + "/#case=damaged!!");
    await third.waitForSelector("#broken-link");
    assert.match(await third.locator("#broken-link h2").textContent(), /cannot be opened/);
    assert.match(await third.locator("#broken-link-detail").textContent(), /Cannot open the shared case/);
    assert.equal(await third.locator("#viewer").count(), 0);
    const box = await third.locator("#broken-link").boundingBox();
    assert.ok(box && box.y < 200, `the notice is at the top (y = ${box?.y})`);
    // A good link pasted into the same tab opens it (only the fragment changes).
    await third.goto(link);
    await third.waitForSelector("#verdict");
    assert.equal(await third.inputValue("#action-prompt"), prompt);
    await third.close();
  }));

test("with only the baselines configured, asking a model is disabled and the page says how to configure one", async () => {
  const bare = await startServer({});
  const b = await launchBrowser();
  try {
    await withScreenshot(b.page, "no models", async () => {
      await b.page.goto(bare.url + "/");
      await b.page.waitForFunction(() => document.querySelector("#ask-status")?.textContent.includes("--config"));
      assert.ok(await b.page.locator("#ask-model").isDisabled());
      // It looks disabled: no pointer, and not the colour of a button that can be pressed.
      const look = await b.page.evaluate(() => {
        const css = (el) => getComputedStyle(el);
        const asked = css(document.querySelector("#ask-model"));
        const live = document.createElement("button");
        document.body.append(live);
        const enabled = { cursor: css(live).cursor, background: css(live).backgroundColor };
        live.remove();
        return { cursor: asked.cursor, background: asked.backgroundColor, enabled };
      });
      assert.equal(look.cursor, "not-allowed");
      assert.notEqual(look.background, look.enabled.background);
      assert.equal(look.enabled.cursor, "pointer");
      assert.match(await b.page.locator("#ask-status").textContent(), /Pasting an answer works/);
    });
  } finally {
    await b.close();
    await bare.stop();
  }
});

test("after all of the above, the server's log never contains the key", () => {
  const log = server.log();
  assert.ok(log.length > 0, "the server wrote a log");
  assert.ok(!log.includes(KEY), "the API key appears in the server log");
});

test("a failed ask keeps what the person had typed in the answer box", () =>
  check("failed ask", async () => {
    const page = browser.page;
    await page.goto(server.url + "/");
    await page.waitForSelector("#model-select option[value=dead-gpt]", { state: "attached" });
    const mine = "<cif>\nmy own answer, typed by hand\n</cif>";
    await page.fill("#answer", mine);
    await page.selectOption("#model-select", "dead-gpt");
    await page.click("#ask-model");
    await page.waitForFunction(() => /model call failed/.test(document.querySelector("#ask-status").textContent), null, { timeout: 60000 });
    assert.equal(await page.locator("#answer").inputValue(), mine);
  }));
