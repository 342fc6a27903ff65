// Placeholder until the reader lands (branch wt-data).
#include "csv_table.h"

#include "../errors.h"

namespace ringmaster::trainer {

LoadedData readCsvTable(const std::string& path, const std::string&, const std::string& flag, const std::vector<std::string>&)
{
    throw UsageError(flag + " " + path + ": CSV files are not supported yet");
}

} // namespace ringmaster::trainer
