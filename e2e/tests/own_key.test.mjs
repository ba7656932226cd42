// Your own key (issue 24): a model asked with the user's key straight from the browser, with
// our server stopped after the page loaded (its Content-Security-Policy still applies). The
// fake provider gets the exact request; the answer is scored in the page; the key never
// reaches our server and is in localStorage only when "remember" is ticked.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser, withScreenshot, fakeProvider } from "../harness.mjs";

const KEY = "sk-own-e2e-5d1c9a7f3b";
let server;
let browser;
let provider;
let answer = "";
const toServer = [];

before(async () => {
  server = await startServer();
  provider = await fakeProvider(() => answer);
  browser = await launchBrowser();
  // Every request the page makes to our server, with its headers and body.
  browser.page.on("request", (r) => {
    if (r.url().startsWith(server.url)) {
      toServer.push({ url: r.url(), headers: JSON.stringify(r.headers()), body: r.postData() ?? "" });
    }
  });
});

after(async () => {
  await browser?.close();
  await provider?.close();
  await server?.stop();
});

const stored = (page) => page.evaluate(() => JSON.stringify({ ...localStorage }));

test("own key: the browser asks the provider directly, with no server; the answer is scored", () =>
  withScreenshot(browser.page, "own key", async () => {
    const page = browser.page;
    await page.goto(server.url + "/");
    await page.waitForSelector("ul.legend[data-for=viewer] li");
    // The ground truth of the task on screen is what the fake model will answer.
    await page.click("#paste-truth");
    await page.waitForSelector("#verdict[data-label=Success]");
    answer = `Here it is.\n${await page.inputValue("#answer")}`;
    await page.click("button:text-is(\"Clear\")");
    const fullPrompt = await page.locator("#full-prompt").textContent();
    assert.ok(fullPrompt.startsWith("You are a CIF operation assistant."));

    // From here on there is no server: only the page and the provider.
    await server.stop();

    await page.click("#own-key summary");
    assert.match(await page.locator("#own-key-note").textContent(),
      /stays in this browser.*straight from your browser, never through or to this site's server/s);
    await page.selectOption("#own-provider", "openai-compatible");
    await page.fill("#own-base-url", provider.baseUrl);
    await page.fill("#own-model", "fake-own");
    await page.fill("#own-key-input", KEY);
    assert.equal(await page.isChecked("#own-remember"), false, "not remembered by default");
    await page.click("#own-use");
    assert.equal(await page.inputValue("#model-select"), "__own_key__");
    assert.ok(!(await stored(page)).includes(KEY), "the key is not in localStorage");

    await page.click("#ask-model");
    await page.waitForFunction(() => document.querySelector("#ask-status").textContent.includes("tokens"));
    assert.match(await page.locator("#ask-status").textContent(), /1200 prompt \+ 300 answer tokens · asked OpenAI-compatible .* directly with your key/);
    await page.waitForSelector("#verdict");
    assert.equal(await page.locator("#verdict").getAttribute("data-label"), "Success");
    assert.equal(await page.inputValue("#answer"), answer);

    // The exact request, straight from the browser (after a CORS preflight).
    assert.equal(provider.requests.length, 1);
    const [req] = provider.requests;
    assert.equal(req.url, "/v1/chat/completions");
    assert.equal(req.headers.authorization, `Bearer ${KEY}`);
    assert.equal(req.headers["content-type"], "application/json");
    assert.deepEqual(JSON.parse(req.body), { model: "fake-own", messages: [{ role: "user", content: fullPrompt }] });
    assert.ok(provider.preflights >= 1, "the browser asked the provider's CORS permission");
    assert.equal(req.headers.origin, server.url);

    // "remember" keeps it in localStorage; "Forget my key" removes it.
    await page.check("#own-remember");
    await page.click("#own-use");
    assert.ok((await stored(page)).includes(KEY), "remembered when asked to");
    await page.click("#own-forget");
    assert.ok(!(await stored(page)).includes(KEY), "forgotten");
    assert.equal(await page.locator("#model-select option[value=__own_key__]").count(), 0);

    // Nothing the page ever sent our server holds the key.
    assert.ok(toServer.length > 0, "the page did talk to our server before it stopped");
    for (const r of toServer) {
      assert.ok(![r.url, r.headers, r.body].some((t) => t.includes(KEY)), `the key went to our server: ${r.url}`);
    }
  }));

test("a remembered key comes back after a reload; the page explains a missing name or key", async () => {
  const again = await startServer();
  try {
    await withScreenshot(browser.page, "own key remembered", async () => {
      const page = browser.page;
      await page.goto(again.url + "/");
      await page.waitForSelector("ul.legend[data-for=viewer] li");
      await page.click("#own-key summary");
      await page.selectOption("#own-provider", "anthropic");
      await page.fill("#own-model", "claude-x");
      await page.fill("#own-key-input", "");
      await page.click("#own-use");
      assert.equal(await page.locator("#own-error").textContent(), "paste your Anthropic API key");

      await page.selectOption("#own-provider", "openai-compatible");
      await page.fill("#own-base-url", provider.baseUrl);
      await page.fill("#own-key-input", KEY);
      await page.check("#own-remember");
      await page.click("#own-use");
      await page.reload();
      await page.waitForSelector("ul.legend[data-for=viewer] li");
      // No server model: the remembered one is chosen by itself.
      await page.waitForFunction(() => document.querySelector("#model-select").value === "__own_key__");
      assert.equal(await page.locator("#model-select option[value=__own_key__]").textContent(), "claude-x (your key)");
      await page.click("#own-key summary");
      assert.equal(await page.inputValue("#own-key-input"), KEY);
      await page.click("#own-forget");
      assert.ok(!(await stored(page)).includes(KEY));
    });
  } finally {
    await again.stop();
  }
});
