#pragma once
// A run's user-given title and notes, kept in the run directory itself (RUN_DIR/notes.json,
// {"title": "...", "notes": "..."}) so that they travel with the run: the app's Runs panel writes them
// (rename, notes field), `ringmaster-runs list --json` shows them, a bundle carries them. The run
// directory's name is never changed: a title is only a label. Written atomically (QSaveFile): a reader
// sees the old file or the new one, never half of one.

#include <QString>
#include <QStringList>

namespace ringmaster::runs {

inline constexpr const char* kNotesFile = "notes.json";

struct RunNotes
{
    QString title;   // empty: the run is shown by its directory's name
    QString notes;
    bool isEmpty() const { return title.isEmpty() && notes.isEmpty(); }
};

// The notes of the run directory DIR; empty when it has none. An unreadable or invalid notes.json gives
// empty notes and one line in PROBLEMS (when given).
RunNotes readRunNotes(const QString& dir, QStringList* problems = nullptr);
// Writes DIR/notes.json (the title trimmed). Throws RunsError with a one-line reason when it cannot.
void writeRunNotes(const QString& dir, const RunNotes& notes);

} // namespace ringmaster::runs
