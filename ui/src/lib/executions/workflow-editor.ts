// CodeMirror 6 for workflow YAML and Lua (hook scripts). This module and CodeMirror itself are
// loaded only when an editor is shown (WorkflowEditor.svelte is imported dynamically), so no other
// page pays for them.
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { yaml } from '@codemirror/lang-yaml';
import {
  bracketMatching,
  defaultHighlightStyle,
  HighlightStyle,
  indentOnInput,
  StreamLanguage,
  syntaxHighlighting,
} from '@codemirror/language';
import { lua } from '@codemirror/legacy-modes/mode/lua';
import { lintGutter, setDiagnostics, type Diagnostic } from '@codemirror/lint';
import { Compartment, EditorSelection, EditorState, Prec } from '@codemirror/state';
import { oneDarkHighlightStyle } from '@codemirror/theme-one-dark';
import { tags } from '@lezer/highlight';
import {
  drawSelection,
  EditorView,
  highlightActiveLine,
  highlightActiveLineGutter,
  keymap,
  lineNumbers,
} from '@codemirror/view';

/** A validation problem as `POST /workflows/validate` answers it (lines and columns from 1). */
export interface EditorProblem {
  message: string;
  line?: number;
  column?: number;
}

export interface WorkflowEditor {
  /** Marks problems at their lines (lint gutter and underline); problems without a line are left to the page. */
  setProblems(problems: EditorProblem[], warnings: EditorProblem[]): void;
  setDark(dark: boolean): void;
  /** Replaces the text (a file opened in the desktop app) unless it is already this. */
  setText(text: string): void;
  /** Selects a line and scrolls it into view, focusing the editor. */
  selectLine(line: number): void;
  destroy(): void;
}

/**
 * The editor's frame in the app's colours (its CSS variables follow the light/dark theme), so its
 * line numbers and text keep the contrast the rest of the UI has; syntax colours come from the
 * default style in light and One Dark's in dark.
 */
const frame = EditorView.theme({
  '&': {
    backgroundColor: 'var(--surface)',
    color: 'var(--text)',
    border: '1px solid var(--border)',
    borderRadius: '6px',
    fontSize: '13px',
  },
  '&.cm-focused': { outline: '2px solid var(--focus)', outlineOffset: '1px' },
  '.cm-scroller': { fontFamily: 'var(--mono)', maxHeight: '28rem', overflow: 'auto' },
  // On the content and gutters (not the scroller), so the gutter runs the whole height.
  '.cm-content, .cm-gutter': { minHeight: '12rem' },
  '.cm-content': { caretColor: 'var(--text)' },
  '.cm-cursor': { borderLeftColor: 'var(--text)' },
  '.cm-gutters': { backgroundColor: 'var(--surface-2)', color: 'var(--muted)', borderRight: '1px solid var(--border)' },
  '.cm-activeLine': { backgroundColor: 'color-mix(in srgb, var(--accent) 7%, transparent)' },
  '.cm-activeLineGutter': {
    backgroundColor: 'color-mix(in srgb, var(--accent) 14%, transparent)',
    color: 'var(--text)',
  },
  '&.cm-focused .cm-selectionBackground, .cm-selectionBackground': {
    backgroundColor: 'color-mix(in srgb, var(--accent) 30%, transparent) !important',
  },
  '.cm-tooltip': { backgroundColor: 'var(--surface)', color: 'var(--text)', border: '1px solid var(--border)' },
  '.cm-diagnostic-error': { borderLeftColor: 'var(--bad)' },
  '.cm-diagnostic-warning': { borderLeftColor: 'var(--warn)' },
});

/**
 * Each theme's style with comments in the app's muted text colour, which keeps AA contrast in both
 * themes (One Dark's grey on the dark surface does not); the last rule for a tag wins.
 */
const withReadableComments = (style: HighlightStyle) =>
  HighlightStyle.define([...style.specs, { tag: tags.comment, color: 'var(--muted)', fontStyle: 'italic' }]);
const LIGHT = withReadableComments(defaultHighlightStyle);
const DARK = withReadableComments(oneDarkHighlightStyle);

const colours = (dark: boolean) => syntaxHighlighting(dark ? DARK : LIGHT);

export function createWorkflowEditor(
  parent: HTMLElement,
  options: {
    text: string;
    label: string;
    dark: boolean;
    invalid: boolean;
    onChange: (text: string) => void;
    /** Default yaml (a workflow); lua for a hook's script. */
    language?: 'yaml' | 'lua';
  },
): WorkflowEditor {
  const highlight = new Compartment();
  const attributes = new Compartment();
  const aria = (invalid: boolean) =>
    EditorView.contentAttributes.of({ 'aria-label': options.label, 'aria-invalid': String(invalid) });
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: options.text,
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        lintGutter(),
        history(),
        drawSelection(),
        indentOnInput(),
        bracketMatching(),
        highlightActiveLine(),
        // Tab indents (YAML is indentation); Escape then Tab leaves the editor, as CodeMirror documents.
        keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
        // A script's long lines wrap: no sideways scrolling (on a phone, a region keyboards cannot scroll).
        options.language === 'lua' ? [StreamLanguage.define(lua), EditorView.lineWrapping] : yaml(),
        EditorState.tabSize.of(2),
        highlight.of(colours(options.dark)),
        attributes.of(aria(options.invalid)),
        Prec.highest(frame),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) options.onChange(update.state.doc.toString());
        }),
      ],
    }),
  });

  const diagnostic = (p: EditorProblem, severity: Diagnostic['severity']): Diagnostic | undefined => {
    const { doc } = view.state;
    if (p.line === undefined || p.line < 1 || p.line > doc.lines) return undefined;
    const line = doc.line(p.line);
    const from = Math.min(line.from + Math.max(0, (p.column ?? 1) - 1), line.to);
    // A problem at the end of a line (or on an empty one) still gets a mark to hover.
    return { from, to: from < line.to ? line.to : Math.min(from + 1, doc.length), severity, message: p.message };
  };

  return {
    setProblems(problems, warnings) {
      const diagnostics = [
        ...problems.map((p) => diagnostic(p, 'error')),
        ...warnings.map((p) => diagnostic(p, 'warning')),
      ].filter((d): d is Diagnostic => d !== undefined);
      view.dispatch(setDiagnostics(view.state, diagnostics));
      view.dispatch({ effects: attributes.reconfigure(aria(problems.length > 0)) });
    },
    setDark(dark) {
      view.dispatch({ effects: highlight.reconfigure(colours(dark)) });
    },
    setText(text) {
      if (text === view.state.doc.toString()) return;
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    },
    selectLine(n) {
      const { doc } = view.state;
      const line = doc.line(Math.min(Math.max(1, n), doc.lines));
      view.dispatch({ selection: EditorSelection.range(line.from, line.to), scrollIntoView: true });
      view.focus();
    },
    destroy: () => view.destroy(),
  };
}
