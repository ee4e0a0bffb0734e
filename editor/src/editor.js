// The in-page WGSL editor. The app loads this file with import() only when an editor opens,
// so the landing page never fetches it. CodeMirror 6 rather than Monaco: about a tenth of the
// bytes, ES modules that esbuild bundles into one file, and no web workers or eval, so it runs
// under `script-src 'self' 'wasm-unsafe-eval'`. It is mounted in a shadow root: there
// CodeMirror's styles go into constructable style sheets (adoptedStyleSheets), which a strict
// `style-src 'self'` allows; in the document itself it would insert <style> elements, which
// need 'unsafe-inline' or a per-response nonce that a static host cannot give.
//
// Validation: the naga-based wgsl_check wasm module beside this file, loaded on first use.
import { EditorState, Compartment, StateEffect } from '@codemirror/state';
import {
  EditorView,
  keymap,
  lineNumbers,
  highlightActiveLine,
  highlightActiveLineGutter,
  drawSelection,
  highlightSpecialChars,
} from '@codemirror/view';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import {
  bracketMatching,
  syntaxHighlighting,
  defaultHighlightStyle,
  indentOnInput,
} from '@codemirror/language';
import { searchKeymap, highlightSelectionMatches } from '@codemirror/search';
import { linter, lintGutter, lintKeymap, forceLinting } from '@codemirror/lint';
import { wgsl } from './wgsl.js';

// The page's stylesheet cannot reach into the shadow root; inherited properties and the
// page's CSS variables do.
const theme = EditorView.theme({
  '&': { maxHeight: '70vh', fontSize: '0.9rem', backgroundColor: 'var(--panel, #fff)' },
  '&.cm-focused': { outline: '2px solid var(--focus, #f59f00)' },
  '.cm-scroller': { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace' },
});

let checkerPromise = null;
/** The wgsl_check wasm module beside this file, loaded and initialised once. */
function checker() {
  if (!checkerPromise) {
    checkerPromise = import('./wgsl_check.js').then(async (m) => {
      await m.default();
      return m;
    });
    checkerPromise.catch(() => { checkerPromise = null; });
  }
  return checkerPromise;
}

/** naga's validate(source) from the wasm module, loaded once. */
export function validator() {
  return checker().then((m) => m.validate);
}

/**
 * naga's comparison of an edited kernel's bindings and entry point with the original's
 * (what the page binds): a list of {kind, binding, name, …}, empty when they fit.
 */
export async function bindingCheck(original, edited, entry) {
  const m = await checker();
  return Array.from(m.binding_check(original, edited, entry));
}

/**
 * The kernel rewritten to log its array accesses (the puzzle page's access view):
 * {source, logBinding, arrays: [{name, binding, len}], unlogged} or {error}.
 */
export async function instrument(source, entry) {
  const m = await checker();
  const r = m.instrument(source, entry);
  if (r.error !== undefined) return { error: r.error };
  return {
    source: r.source,
    logBinding: r.logBinding,
    unlogged: r.unlogged,
    arrays: Array.from(r.arrays).map((a) => ({ name: a.name, binding: a.binding, len: a.len })),
  };
}

/**
 * The kernel rewritten so every loop stops after `budget` iterations and flags which one
 * did (learner-edited runs): {source, flagBinding, flagWords, lines, budget} or {error}.
 */
export async function budgetLoops(source, budget) {
  const m = await checker();
  const r = m.budget_loops(source, budget);
  if (r.error !== undefined) return { error: r.error };
  return {
    source: r.source,
    flagBinding: r.flagBinding,
    flagWords: r.flagWords,
    budget: r.budget,
    lines: Array.from(r.lines),
  };
}

function toCm(doc, d, source) {
  const len = doc.length;
  let { from, to } = d;
  if (from === undefined) {
    // The browser's compiler gives line and column: mark to the end of the word there.
    const line = doc.line(Math.min(Math.max(d.line, 1), doc.lines));
    from = Math.min(line.from + Math.max(d.column, 1) - 1, line.to);
    const word = /^\w*/.exec(doc.sliceString(from, line.to))[0].length;
    to = from + Math.max(word, from < line.to ? 1 : 0);
  }
  from = Math.min(from, len);
  to = Math.min(Math.max(to, from), len);
  return { from, to, severity: d.severity || 'error', message: d.message, source };
}

/**
 * Mounts an editor in `parent`.
 * opts: { doc, onChange(doc), onDiagnostics(list), label, extra diagnostics source name }.
 * Returns a handle the app drives: get, set, setExternal, check, goto, focus, destroy.
 */
/** Dispatched when the browser's messages change, so the linter runs again (forceLinting
 * alone only hurries a lint already pending after an edit). */
const refreshLint = StateEffect.define();

export async function mount(parent, opts) {
  const validate = await validator();
  let naga = [];
  let external = [];
  // The text naga last checked and reported (tests wait for it instead of the lint delay).
  let checked = null;
  const language = new Compartment();
  const nagaLint = linter(
    (view) => {
      const src = view.state.doc.toString();
      try {
        naga = Array.from(validate(src));
      } catch (e) {
        naga = [{ from: 0, to: 0, line: 1, column: 1, message: String(e) }];
      }
      if (opts.onDiagnostics) opts.onDiagnostics(naga);
      checked = src;
      return [
        ...naga.map((d) => toCm(view.state.doc, d, 'naga')),
        ...external.map((d) => toCm(view.state.doc, d, opts.browserSource || 'browser')),
      ];
    },
    {
      delay: 250,
      needsRefresh: (u) => u.transactions.some((tr) => tr.effects.some((e) => e.is(refreshLint))),
    },
  );
  const root = parent.shadowRoot || parent.attachShadow({ mode: 'open' });
  root.replaceChildren();
  const view = new EditorView({
    root,
    parent: root,
    state: EditorState.create({
      doc: opts.doc || '',
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        highlightSpecialChars(),
        history(),
        drawSelection(),
        indentOnInput(),
        bracketMatching(),
        highlightActiveLine(),
        highlightSelectionMatches(),
        language.of(wgsl),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        lintGutter(),
        nagaLint,
        keymap.of([...defaultKeymap, ...historyKeymap, ...searchKeymap, ...lintKeymap, indentWithTab]),
        EditorView.contentAttributes.of({ 'aria-label': opts.label || 'WGSL' }),
        // Typing over a selection: Chromium's own editing would put the new text in a
        // <span style="color: …"> to keep the replaced (highlighted) text's colour, a style
        // attribute the strict CSP blocks and reports (style-src-attr; a learner saw it on a
        // puzzle page); CodeMirror redraws the line either way. The replacement is made here
        // instead, so the browser does not edit the DOM itself. IME composition is left alone.
        EditorView.domEventHandlers({
          beforeinput(e, v) {
            if (e.inputType !== 'insertText' || e.isComposing || !e.data) return false;
            if (v.state.selection.ranges.every((r) => r.empty)) return false;
            e.preventDefault();
            v.dispatch(v.state.replaceSelection(e.data), { userEvent: 'input.type', scrollIntoView: true });
            return true;
          },
        }),
        theme,
        EditorView.updateListener.of((u) => {
          if (u.docChanged) {
            external = [];
            if (opts.onChange) opts.onChange(u.state.doc.toString());
          }
        }),
      ],
    }),
  });
  // For tests: the whole text, whatever CodeMirror has drawn of it.
  parent.editorText = () => view.state.doc.toString();
  // For tests: the text whose verdict the page has been told (null before the first check).
  parent.checkedText = () => checked;
  // For tests: the 1-based line the cursor is on.
  parent.cursorLine = () => view.state.doc.lineAt(view.state.selection.main.head).number;
  return {
    get: () => view.state.doc.toString(),
    set(doc) {
      external = [];
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: doc } });
    },
    /** Messages from the browser's own compiler: [{line, column, message}] (1-based). */
    setExternal(list) {
      external = Array.from(list || []);
      view.dispatch({ effects: refreshLint.of(null) });
      forceLinting(view);
    },
    /** naga's diagnostics for the current text, checked now (not after the lint delay). */
    check() {
      const src = view.state.doc.toString();
      naga = Array.from(validate(src));
      forceLinting(view);
      return naga;
    },
    /** The error list's jump: cursor to `line`:`column` (1-based, clamped to the text as
     * it is now, which may have changed since the check), that line scrolled to the middle
     * of the editor and the page, and the editor focused. */
    goto(line, column) {
      const doc = view.state.doc;
      const l = doc.line(Math.min(Math.max(line | 0, 1), doc.lines));
      const pos = Math.min(l.from + Math.max(column | 0, 1) - 1, l.to);
      view.dispatch({ selection: { anchor: pos }, effects: EditorView.scrollIntoView(pos, { y: 'center' }) });
      view.focus();
    },
    focus: () => view.focus(),
    destroy: () => view.destroy(),
  };
}
