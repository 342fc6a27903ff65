#pragma once
// CSV tables: a header row, then one sample per row; every column but the label column is a numeric
// feature (float32 [N, F]). The label column (--label-column NAME, default the last) holds class
// names (strings: mapped to indices in sorted order, the names kept as classNames), integer class
// indices (int64), or other numbers (float32 regression targets).

#include <string>
#include <vector>

#include "trainer/data/loaded_data.h"

namespace ringmaster::trainer {

// `labelColumn` empty: the last column. With `classes` non-empty (the training split's names, for a
// validation file) string labels map to those indices and an unknown one is an error. Throws
// UsageError naming the file and the line: no header, unknown label column, ragged row, non-numeric
// or NaN feature, no rows.
LoadedData readCsvTable(const std::string& path, const std::string& labelColumn, const std::string& flag,
                        const std::vector<std::string>& classes = {});

} // namespace ringmaster::trainer
