// The console's shell: the token form (the token lives in sessionStorage only), the store
// picker, and hash routing to the views. Every view reads through the public /v1 API.
import "./style.css";
import { get, session } from "./api.js";
import { guarded, showError } from "./ui.js";
import { storeView } from "./views/store.js";
import { itemView } from "./views/item.js";
import { explainView } from "./views/explain.js";
import { containerView } from "./views/container.js";
import { devicesView } from "./views/devices.js";
import { capabilityView } from "./views/capability.js";
import { authorizeView } from "./views/authorize.js";
import { trustView } from "./views/trust.js";

const VIEWS = {
  store: storeView,
  item: itemView,
  trust: trustView,
  explain: explainView,
  container: containerView,
  devices: devicesView,
  capability: capabilityView,
  authorize: authorizeView,
};

const main = document.getElementById("main");
const tokenInput = document.getElementById("token");
const storeSelect = document.getElementById("store");
const whoami = document.getElementById("whoami");

async function loadStores() {
  const page = await get("/v1/stores?limit=1000");
  const ids = page.results.map((s) => s.id);
  storeSelect.replaceChildren(...ids.map((id) => new Option(id, id, false, id === session.store)));
  if (!ids.includes(session.store)) session.store = ids[0] || "";
  storeSelect.value = session.store;
  whoami.textContent = ids.length ? `Connected: ${ids.length} store(s) readable with this token.` : "Connected: this token reads no store.";
}

document.getElementById("connect").addEventListener("submit", async (e) => {
  e.preventDefault();
  session.token = tokenInput.value.trim();
  const ok = await guarded(loadStores);
  if (ok !== undefined || storeSelect.options.length) await render();
});

storeSelect.addEventListener("change", () => {
  session.store = storeSelect.value;
  render();
});

let current = 0;
let done = 0;
/** Renders the view the hash names (`#view/arg`) into a fresh element: a render overtaken by a
 * newer one keeps drawing into its own detached element, never into the page. */
async function render() {
  const [name, ...rest] = (location.hash.slice(1) || "store").split("/");
  const view = VIEWS[name] || storeView;
  const arg = rest.map(decodeURIComponent).join("/");
  for (const a of document.querySelectorAll("#tabs a")) {
    if (a.getAttribute("href") === `#${name}`) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  const mine = ++current;
  const alive = () => mine === current;
  const root = document.createElement("div");
  main.replaceChildren(root);
  delete main.dataset.ready;
  showError(null);
  if (!session.token || !session.store) {
    root.append(Object.assign(document.createElement("p"), { textContent: "Type a token and connect to read a store." }));
  } else {
    try {
      await view(root, arg, alive);
    } catch (e) {
      if (alive()) showError(e);
    }
  }
  if (alive()) {
    main.dataset.ready = name;
    main.dataset.done = String(++done);
  }
}

window.addEventListener("hashchange", render);

if (session.token) {
  tokenInput.value = session.token;
  guarded(loadStores).then(render);
} else {
  render();
}
