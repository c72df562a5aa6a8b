/* Every user action, declared once: the enum, the name used in the keymap
 * file, the default keys, the keymap it lives in and the help text all come
 * from TUI_ACTIONS, so the `?` screen, `--keys-man` and the dispatcher
 * cannot drift apart (tig's REQ_INFO). */
#ifndef TUI_ACTIONS_H
#define TUI_ACTIONS_H
#include <stdio.h>

/* Keymaps: a view looks its own keymap up first, then GENERIC. */
#define TUI_KEYMAPS(KM_) \
	KM_(GENERIC, "generic", "All views") \
	KM_(HEATMAP, "heatmap", "Heatmap") \
	KM_(CURVE, "curve", "Layer curve") \
	KM_(BISECT, "bisect", "Bisect") \
	KM_(NOTES, "notes", "Notes")

enum tui_keymap {
#define KM_(id, name, title) KM_##id,
	TUI_KEYMAPS(KM_)
#undef KM_
	KM__COUNT
};

/* ACTION_(ID, KEYMAP, "default keys", "help text") */
#define TUI_ACTIONS(ACTION_) \
	ACTION_(MOVE_UP, GENERIC, "<Up> k", "Move the cursor up") \
	ACTION_(MOVE_DOWN, GENERIC, "<Down> j", "Move the cursor down") \
	ACTION_(MOVE_LEFT, GENERIC, "<Left> h", "Move the cursor left") \
	ACTION_(MOVE_RIGHT, GENERIC, "<Right> l", "Move the cursor right") \
	ACTION_(PAGE_UP, GENERIC, "<PgUp> <C-b>", "Move one page up") \
	ACTION_(PAGE_DOWN, GENERIC, "<PgDown> <C-f> <Space>", "Move one page down") \
	ACTION_(MOVE_FIRST, GENERIC, "g", "Go to the first row") \
	ACTION_(MOVE_LAST, GENERIC, "G", "Go to the last row") \
	ACTION_(MOVE_HOME, GENERIC, "<Home>", "Go to the first column") \
	ACTION_(MOVE_END, GENERIC, "<End>", "Go to the last column") \
	ACTION_(ENTER, GENERIC, "<Enter>", "Open the selection (cell: sub-stages; sub-stage: tensor)") \
	ACTION_(VIEW_CLOSE, GENERIC, "q", "Close the view; quit from the heatmap") \
	ACTION_(VIEW_BACK, GENERIC, "<Esc> <Backspace>", "Close the view (never quits)") \
	ACTION_(QUIT, GENERIC, "Q", "Quit at once, even mid-scan") \
	ACTION_(HELP, GENERIC, "?", "Show this help") \
	ACTION_(PROMPT, GENERIC, ":", "Command line (:help lists the commands)") \
	ACTION_(SEARCH, GENERIC, "/", "Filter stages by a PCRE2 regex (empty clears)") \
	ACTION_(SEARCH_NEXT, GENERIC, "n", "Next cell matching the filter") \
	ACTION_(SEARCH_PREV, GENERIC, "N", "Previous cell matching the filter") \
	ACTION_(REDRAW, GENERIC, "<C-l>", "Redraw the screen") \
	ACTION_(VIEW_HEATMAP, GENERIC, "H", "Back to the heatmap") \
	ACTION_(VIEW_STAGES, GENERIC, "s", "Sub-stages of the cell, with single-step cos change") \
	ACTION_(VIEW_RANKS, GENERIC, "a", "All ranks of the cell and the merged comparison") \
	ACTION_(VIEW_TENSOR, GENERIC, "i", "Tensor view: stats, top |diff|, per-token error") \
	ACTION_(VIEW_CURVE, GENERIC, "L", "Layer curve of the probe stage") \
	ACTION_(VIEW_BISECT, GENERIC, "b", "Layer bisect (on another phase / pass: a new one)") \
	ACTION_(VIEW_NOTES, GENERIC, "o", "List the notes") \
	ACTION_(NOTE_NEW, GENERIC, "w", "Write a new numbered note from this view") \
	ACTION_(MARK, GENERIC, "m", "Mark the selection as a finding") \
	ACTION_(EXPORT, GENERIC, "e", "Export a report of the session") \
	ACTION_(PHASE_NEXT, GENERIC, "<Tab>", "Next phase (causal order)") \
	ACTION_(PHASE_PREV, GENERIC, "<S-Tab>", "Previous phase") \
	ACTION_(PASS_NEXT, GENERIC, "p", "Next pass / step / call") \
	ACTION_(PASS_PREV, GENERIC, "P", "Previous pass / step / call") \
	ACTION_(RANK_NEXT, GENERIC, "r", "Next rank (all, 0, 1, ...)") \
	ACTION_(RANK_PREV, GENERIC, "R", "Previous rank") \
	ACTION_(VARIANT_NEXT, GENERIC, "v", "Next variant (dumpbisect REF T1 T2 ...)") \
	ACTION_(VARIANT_PREV, GENERIC, "V", "Previous variant") \
	ACTION_(VIEW_TIME, GENERIC, "T", "Time view: passes against layers, worst per cell") \
	ACTION_(VIEW_VARIANTS, GENERIC, "X", "Variants side by side: probe per layer and variant") \
	ACTION_(METRIC_TOGGLE, GENERIC, "c", "Toggle the metric between cos and rel") \
	ACTION_(METRIC_NEXT, GENERIC, "C", "Cycle metric: cos, rel, rel_diff, max_abs, x noise") \
	ACTION_(FIRST_DIVERGENCE, GENERIC, "f", "Jump to the first divergence") \
	ACTION_(TRANSPOSE, HEATMAP, "t", "Transpose: layers as columns") \
	ACTION_(PROBE_PREV, CURVE, "[", "Previous stage (the bisect keeps its probe)") \
	ACTION_(PROBE_NEXT, CURVE, "]", "Next stage (the bisect keeps its probe)") \
	ACTION_(BISECT_ACCEPT, BISECT, "<Enter>", "Accept the auto verdict") \
	/* verdicts on keys that mean nothing else anywhere: b, s and g open \
	 * the bisect, the sub-stages and the first row in every view, so \
	 * "b b" can never judge a step by accident */ \
	ACTION_(BISECT_GOOD, BISECT, "+", "Verdict: good (the probed layer is still right)") \
	ACTION_(BISECT_BAD, BISECT, "-", "Verdict: bad (the probed layer is already wrong)") \
	ACTION_(BISECT_SKIP, BISECT, "=", "Verdict: skip this layer (no verdict)") \
	ACTION_(BISECT_UNDO, BISECT, "u", "Undo the last step") \
	ACTION_(BISECT_RESET, BISECT, "x", "Reset the bisect (another phase / pass: a new one)") \
	ACTION_(BISECT_RESCAN, BISECT, "<C-r>", "Rescan the trees (new layer dumped)") \
	ACTION_(BISECT_REPLAY_BACK, BISECT, "<Left> [", "Replay: one step back in the log") \
	ACTION_(BISECT_REPLAY_FORWARD, BISECT, "<Right> ]", "Replay: next step (live after the last)") \
	ACTION_(NOTE_OPEN, NOTES, "<Enter>", "Open the note in $EDITOR")

enum tui_action {
	A_NONE = 0,
#define ACTION_(id, km, keys, help) A_##id,
	TUI_ACTIONS(ACTION_)
#undef ACTION_
	A__COUNT
};

struct tui_action_info {
	const char *name;               /* "move-up": keymap file and help */
	enum tui_keymap keymap;
	const char *keys;               /* default keys, key-parser syntax */
	const char *help;
};

/* Info of action a (1 <= a < A__COUNT); static storage. */
const struct tui_action_info *tui_action(enum tui_action a);
extern const char *const tui_keymap_names[KM__COUNT];  /* "generic", ... */
extern const char *const tui_keymap_titles[KM__COUNT]; /* "All views", ... */

/* "move-up", "MOVE_UP", "Move_Up" all name A_MOVE_UP; A_NONE if unknown. */
enum tui_action tui_action_from_name(const char *name);
/* The default key list as man-page text (dumpbisect --keys-man). */
void tui_actions_man(FILE *out);

#endif
