#pragma once
// A run's user-given title, notes and colour, kept in the run directory itself (RUN_DIR/notes.json,
// {"title": "...", "notes": "...", "colour": "#rrggbb"}) so that they travel with the run: the app's Runs panel writes them
// (rename, notes field), `ringmaster-runs list --json` shows them, a bundle carries them. The run
// directory's name is never changed: a title is only a label. Written atomically (QSaveFile): a reader
// sees the old file or the new one, never half of one. The colour is the one the run is drawn in when runs
// are compared (the app's Runs tab); without one the app derives a stable colour from the folder's name.
// Each writer changes only its own keys and keeps the others (a rename keeps the colour, and so on).

#include <QString>
#include <QStringList>

#include "runs/run_files.h"   // kNotesFile

namespace ringmaster::runs {

struct RunNotes
{
    QString title;   // empty: the run is shown by its directory's name
    QString notes;
    QString colour{};  // "#rrggbb"; empty: none chosen (writeRunNotes leaves it alone: see writeRunColour)
    bool isEmpty() const { return title.isEmpty() && notes.isEmpty() && colour.isEmpty(); }
};

// The notes of the run directory DIR; empty when it has none. An unreadable or invalid notes.json gives
// empty notes and one line in PROBLEMS (when given).
RunNotes readRunNotes(const QString& dir, QStringList* problems = nullptr);
// Writes the title (trimmed) and notes into DIR/notes.json, keeping its other keys (the colour). Throws
// RunsError with a one-line reason when it cannot.
void writeRunNotes(const QString& dir, const RunNotes& notes);
// Sets the run's colour ("#rrggbb", any case; "" removes it) in DIR/notes.json, keeping its other keys.
// Throws RunsError when COLOUR is not of that form or the file cannot be written.
void writeRunColour(const QString& dir, const QString& colour);

} // namespace ringmaster::runs
