// The in-page WGSL editor. The app loads this file with import() only when an editor opens,
// so the landing page never fetches it. CodeMirror 6 rather than Monaco: about a tenth of the
// bytes, ES modules that esbuild bundles into one file, and no web workers or eval, so it runs
// under `script-src 'self' 'wasm-unsafe-eval'`. Its styles go through constructable style
// sheets (adoptedStyleSheets), which `style-src` does not restrict.
//
// Validation: the naga-based wgsl_check wasm module beside this file, loaded on first use.
import { EditorState, Compartment } from '@codemirror/state';
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

let validatorPromise = null;
/** naga's validate(source) from the wasm module, loaded once. */
export function validator() {
  if (!validatorPromise) {
    validatorPromise = import('./wgsl_check.js').then(async (m) => {
      await m.default();
      return m.validate;
    });
  }
  return validatorPromise;
}

function toCm(doc, d, source) {
  const len = doc.length;
  const from = Math.min(d.from, len);
  const to = Math.min(Math.max(d.to, from), len);
  return { from, to, severity: d.severity || 'error', message: d.message, source };
}

/**
 * Mounts an editor in `parent`.
 * opts: { doc, onChange(doc), onDiagnostics(list), label, extra diagnostics source name }.
 * Returns a handle the app drives: get, set, setExternal, diagnostics, focus, destroy.
 */
export async function mount(parent, opts) {
  const validate = await validator();
  let naga = [];
  let external = [];
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
      return [
        ...naga.map((d) => toCm(view.state.doc, d, 'naga')),
        ...external.map((d) => toCm(view.state.doc, d, opts.browserSource || 'browser')),
      ];
    },
    { delay: 250 },
  );
  const view = new EditorView({
    parent,
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
        EditorView.updateListener.of((u) => {
          if (u.docChanged) {
            external = [];
            if (opts.onChange) opts.onChange(u.state.doc.toString());
          }
        }),
      ],
    }),
  });
  return {
    get: () => view.state.doc.toString(),
    set(doc) {
      external = [];
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: doc } });
    },
    /** Messages from the browser's own compiler, [{from,to,message,severity}] in UTF-16. */
    setExternal(list) {
      external = Array.from(list || []);
      forceLinting(view);
    },
    /** naga's diagnostics for the current text, checked now (not after the lint delay). */
    check() {
      naga = Array.from(validate(view.state.doc.toString()));
      forceLinting(view);
      return naga;
    },
    focus: () => view.focus(),
    destroy: () => view.destroy(),
  };
}
