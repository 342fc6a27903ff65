#pragma once
// The trainer's options (core/protocol/trainer_options.h, the one table) in Qt's terms, for the launcher, the job
// file reader and the app: a flag and its job key ("--batch-size" and "batch_size"), an option's default as the
// JSON value a job file holds, and a flag's text typed by its row so that a job made from flags holds the same
// numbers and booleans as one written by hand ("--epochs 3" is "epochs": 3, not "3").

#include <QJsonValue>
#include <QString>

namespace ringmaster::supervisor {

// "--batch-size", "batch-size" or "batch_size" -> "batch_size" (the job file's key).
QString trainerKeyOf(const QString& flagOrKey);
// "batch_size" -> "--batch-size".
QString trainerFlagOf(const QString& key);
// KEY's default from the table as a job file holds it: 64, 0.01, true, "cnn". KEY must be the table's.
QJsonValue trainerDefault(const char* key);
// TEXT as KEY's row types it: a whole number, a number or a boolean when it is one, else the text as given
// (an unknown key, a text option, or a value the trainer will refuse with its own words).
QJsonValue typedTrainerValue(const QString& flagOrKey, const QString& text);

} // namespace ringmaster::supervisor
