#pragma once
// Writes scalar records (scalar_table.h) as the long table `ringmaster-runs export` produces:
//   CSV:  run,step,wall_time,name,value   (a header, then one row per record)
//   JSON: [{"run": ..., "step": ..., "wall_time": ..., "name": ..., "value": ...}, ...]
// Numbers are written in the shortest form that reads back to the same double, so every value
// round-trips exactly; a missing wall time is an empty field (CSV) or null (JSON), and a value that is not
// finite is nan/inf/-inf (CSV) or null (JSON, which has no such numbers). The file is replaced atomically
// (QSaveFile): an output that cannot be written is a RunsError and leaves nothing behind.

#include <QByteArray>
#include <QList>
#include <QString>

#include "runs/scalar_table.h"

namespace ringmaster::runs {

enum class ExportFormat { Csv, Json };

inline constexpr const char* kExportCsvHeader = "run,step,wall_time,name,value";

// The shortest decimal text that reads back as exactly VALUE ("0.1", "0.33333333333333331", "1e-300").
QString roundTripNumber(double value);

QByteArray scalarsAsCsv(const QList<ScalarRecord>& records);
QByteArray scalarsAsJson(const QList<ScalarRecord>& records);

// Writes the records to PATH atomically. Throws RunsError (naming the file and the fix) when it cannot.
void writeScalars(const QList<ScalarRecord>& records, const QString& path, ExportFormat format);

} // namespace ringmaster::runs
