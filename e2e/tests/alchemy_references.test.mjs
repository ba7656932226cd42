// AlchemyBench on the suites page: choosing K = 5 retrieves five of the server's other
// recipes as references (BM25, said to be an offline stand-in, since this server has no
// embeddings model), puts them in the prompt, and lists each with its id and score; K = 0
// goes back to the one-shot prompt.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser, withScreenshot } from "../harness.mjs";

let server;
let browser;
before(async () => {
  server = await startServer({});
  browser = await launchBrowser();
  await browser.page.goto(server.url + "/suites");
  await browser.page.waitForSelector("#suite-select option[value=alchemy]", { state: "attached" });
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

test("K = 5 shows five retrieved recipes and their method; K = 0 is one-shot again", () =>
  withScreenshot(browser.page, "alchemy references", async () => {
    const page = browser.page;
    await page.selectOption("#suite-select", "alchemy");
    await page.waitForSelector("#suite-rag-k");
    await page.waitForFunction(() => /--- Example ---/.test(document.querySelector("#suite-prompt").textContent));
    assert.equal(await page.locator("#suite-references").count(), 0);
    const own = await page.locator("#suite-task").inputValue();

    await page.selectOption("#suite-rag-k", "5");
    await page.waitForSelector("#suite-references li >> nth=4");
    assert.equal(await page.locator("#suite-references li").count(), 5);
    assert.match(await page.locator("#suite-retrieval-method").textContent(), /^BM25 .*stand-in/);
    const prompt = await page.locator("#suite-prompt").textContent();
    assert.match(prompt, /# Reference 5:/);
    assert.doesNotMatch(prompt, /# Reference 6:/);
    const ids = await page.locator("#suite-references li").evaluateAll((ls) => ls.map((l) => l.dataset.recipe));
    assert.equal(new Set(ids).size, 5);
    assert.ok(!ids.includes(own), "a recipe is never its own reference");
    // Each reference opens to its key contributions and recipe.
    await page.locator("#suite-references li summary").first().click();
    assert.match(await page.locator("#suite-references li pre").first().textContent(), /Key Contributions/);

    await page.selectOption("#suite-rag-k", "0");
    await page.waitForFunction(() => !document.querySelector("#suite-references"));
    assert.match(await page.locator("#suite-prompt").textContent(), /--- Example ---/);
  }));
