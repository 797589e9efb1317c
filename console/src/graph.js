// Pictures: Cytoscape.js graphs (its layouts, no hand-written layout), each paired with a text
// legend and a list of what it shows, so colour is never the only signal and a screen reader
// reads the same facts.
import cytoscape from "cytoscape";
import dagre from "cytoscape-dagre";

cytoscape.use(dagre);

/**
 * The layered layout of directed graphs (dagre): ranks top to bottom, and each edge drawn along
 * the route dagre gives it (straight segments through its bend points), so an edge spanning
 * several ranks goes around the nodes between instead of through them.
 */
const LAYERED = {
  rankDir: "TB",
  nodeSep: 60,
  edgeSep: 20,
  rankSep: 60,
  useDagreEdgeControlPoints: true,
  automaticDagreEdgeStyle: true,
  dagreEdgeStyle: {
    "curve-style": "segments",
    "segment-weights": (e) => e.scratch("controlPointWeights"),
    "segment-distances": (e) => e.scratch("controlPointDistances"),
    "edge-distances": "intersection",
  },
};

/** The labels' font: one family, so the canvas that measures them draws what Cytoscape draws. */
const FONT_FAMILY = "sans-serif";
const FONT_PX = 11;
const NODE_TEXT_WIDTH = 180;
let measurer;
/** Width and height of a leaf node's label as Cytoscape wraps it (at spaces, within
 * NODE_TEXT_WIDTH, and at each newline): the node is sized to it (`width: label` is deprecated). */
function labelSize(ele) {
  measurer = measurer || document.createElement("canvas").getContext("2d");
  measurer.font = `${ele.hasClass("focus") ? "bold " : ""}${FONT_PX}px ${FONT_FAMILY}`;
  const w = (t) => measurer.measureText(t).width;
  let width = 0;
  let lines = 0;
  for (const line of String(ele.data("label") || "").split("\n")) {
    let cur = "";
    for (const word of line.split(" ")) {
      const next = cur ? `${cur} ${word}` : word;
      if (cur && w(next) > NODE_TEXT_WIDTH) {
        width = Math.max(width, w(cur));
        lines++;
        cur = word;
      } else cur = next;
    }
    width = Math.max(width, w(cur));
    lines++;
  }
  return { w: Math.ceil(Math.min(width, NODE_TEXT_WIDTH)) + 2, h: Math.ceil(lines * FONT_PX * 1.2) + 2 };
}

/** Node classes: each has a colour AND a border style or shape, and its label carries the word. */
const STYLE = [
  {
    selector: "node",
    style: {
      label: "data(label)",
      "text-wrap": "wrap",
      "text-max-width": `${NODE_TEXT_WIDTH}px`,
      "font-size": FONT_PX,
      "font-family": FONT_FAMILY,
      "text-valign": "center",
      "text-halign": "center",
      "background-color": "#e8eef7",
      "border-width": 1,
      "border-color": "#44546a",
      color: "#111",
      shape: "round-rectangle",
      width: (e) => labelSize(e).w,
      height: (e) => labelSize(e).h,
      padding: "8px",
    },
  },
  {
    selector: ":parent",
    style: {
      "text-valign": "top",
      "text-halign": "center",
      "background-color": "#f7f7f7",
      "background-opacity": 0.6,
      "border-width": 2,
      "font-weight": "bold",
      // A set's title (a grant id and its verdict) on one or two lines, clear of the border.
      "text-max-width": "420px",
      "text-margin-y": -6,
      padding: "14px",
    },
  },
  { selector: "edge", style: { width: 1.5, "line-color": "#555", "target-arrow-color": "#555", "target-arrow-shape": "triangle", "curve-style": "bezier", label: "data(label)", "font-size": 10, "font-family": FONT_FAMILY, "text-background-color": "#fff", "text-background-opacity": 1 } },
  { selector: ".ok", style: { "background-color": "#d4f0d4", "border-color": "#1b6e1b", "border-width": 3 } },
  { selector: ".bad", style: { "background-color": "#fbd9d3", "border-color": "#a4161a", "border-width": 3, "border-style": "dashed" } },
  { selector: ".warn", style: { "background-color": "#fff1c2", "border-color": "#8a6100", "border-width": 3, "border-style": "dotted" } },
  { selector: ".muted", style: { "background-color": "#eeeeee", "border-color": "#777", color: "#444", "border-style": "dashed" } },
  { selector: ".focus", style: { "border-width": 5, "border-color": "#1d3fbb", "font-weight": "bold" } },
  { selector: ".blocking", style: { shape: "octagon", "border-width": 5 } },
  { selector: ".preview", style: { "background-color": "#ffd7a8", "border-color": "#b34700", "border-width": 4, "border-style": "double" } },
  { selector: ".device", style: { shape: "barrel", "background-color": "#e6e0f5" } },
  { selector: ".person", style: { shape: "ellipse" } },
  { selector: "edge.owns", style: { "line-style": "dashed", "line-color": "#999", "target-arrow-color": "#999" } },
  // Edges between sets laid out in one row arc below it instead of crossing the nodes between.
  { selector: "edge.arc", style: { "curve-style": "unbundled-bezier", "control-point-distances": [90], "control-point-weights": [0.5] } },
  { selector: "edge.pending", style: { "line-style": "dotted", "line-color": "#8a6100", "target-arrow-color": "#8a6100" } },
  { selector: "edge.bad", style: { "line-color": "#a4161a", "target-arrow-color": "#a4161a", "line-style": "dashed" } },
];

/** The smallest rendered text of a picture, in CSS pixels: a graph too big to fit its box at that
 * size gets a taller (and if need be wider, scrolled) box instead of being shrunk below it. */
export const MIN_FONT_PX = 10;
const PAD = 12;

/**
 * Draws `elements` into a new figure appended to `parent`, with a caption and a text list of
 * `facts` (strings). Returns the Cytoscape instance.
 */
export function figure(parent, { title, elements, layout = "breadthfirst", layoutOptions = {}, facts = [], height = 320, testid }) {
  const fig = document.createElement("figure");
  fig.className = "picture";
  if (testid) fig.dataset.testid = testid;
  const cap = document.createElement("figcaption");
  cap.textContent = title;
  fig.append(cap);
  const box = document.createElement("div");
  box.className = "graph";
  box.setAttribute("role", "img");
  box.setAttribute("aria-label", `${title}: ${facts.join("; ")}`);
  // CSSOM, not a style attribute: the Content-Security-Policy allows it.
  box.style.height = `${height}px`;
  fig.append(box);
  if (facts.length) {
    const ul = document.createElement("ul");
    ul.className = "facts";
    for (const f of facts) {
      const li = document.createElement("li");
      li.textContent = f;
      ul.append(li);
    }
    fig.append(ul);
  }
  parent.append(fig);
  const cy = cytoscape({
    container: box,
    elements,
    style: STYLE,
    layout: layout === "dagre" ? { name: "dagre", padding: PAD, animate: false, ...LAYERED, ...layoutOptions } : { name: layout, directed: true, padding: PAD, spacingFactor: 1.1, animate: false, ...layoutOptions },
    // A one-node picture is not blown up to fill its box.
    maxZoom: 1.4,
    userZoomingEnabled: false,
    boxSelectionEnabled: false,
    autoungrabify: true,
  });
  const smallest = Math.min(...cy.elements().map((e) => parseFloat(e.style("font-size"))));
  const minZoom = MIN_FONT_PX / smallest;
  if (cy.zoom() < minZoom) {
    const bb = cy.elements().boundingBox();
    box.style.height = `${Math.ceil(bb.h * minZoom + 2 * PAD) + 1}px`;
    const width = Math.ceil(bb.w * minZoom + 2 * PAD) + 1;
    if (width > box.clientWidth) box.style.width = `${width}px`;
    cy.resize();
    cy.fit(undefined, PAD);
  }
  box.dataset.nodes = String(cy.nodes().length);
  box.dataset.edges = String(cy.edges().length);
  // The tests read the drawn geometry (labels, node boxes, edge paths) from here.
  box.cy = cy;
  return cy;
}

/** A node element. */
export const node = (id, label, classes = "", parent) => ({ data: { id, label, ...(parent ? { parent } : {}) }, classes });
/** An edge element. */
export const edge = (source, target, label = "", classes = "") => ({ data: { id: `${source}->${target}:${label}`, source, target, label }, classes });
