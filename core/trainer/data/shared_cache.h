#pragma once
// The data is held once per machine, not once per rank: a decoded dataset (LoadedData) is written once
// into a cache file that every local rank memory-maps read-only, so N ranks share one copy of the
// pages. The first rank to need it builds it under an exclusive lock (flock) and publishes it with an
// atomic rename; the others wait on the lock and map the result. Later runs reuse it while the source
// is unchanged: the cache key covers the source's fingerprint (names, sizes and modification times of
// its files) and the reader's options. Tensors returned alias the mapping and are READ-ONLY: take
// batches with index_select (which copies), never modify them in place.

#include <functional>
#include <string>

#include "trainer/data/loaded_data.h"

namespace ringmaster::trainer {

// Where caches live: $RINGMASTER_DATA_CACHE if set, else $XDG_CACHE_HOME/ringmaster/data, else
// ~/.cache/ringmaster/data. "off" (the variable or --data-cache off) disables caching.
std::string defaultDataCacheDir();

// A digest of everything that decides the decoded result: the source path, for every file under it
// (or the file itself) its relative name, size and modification time, plus `options` (e.g. the
// format, the image size, the label column, a reader version).
std::string dataFingerprint(const std::string& sourcePath, const std::string& options);

struct CachedData
{
    LoadedData data;      // tensors alias the mapping (read-only)
    std::string path;     // the cache file
    bool built = false;   // true when this call decoded the source and wrote the file
};

// Maps the cache file for `fingerprint` in `cacheDir`, building it with `build` first when it is
// missing or unreadable (a damaged or truncated file is rebuilt, never trusted). Throws IoError when
// the folder or file cannot be written (the caller may then fall back to `build` in memory), and
// whatever `build` throws (UsageError for bad data) unchanged.
CachedData mapOrBuildCache(const std::string& cacheDir, const std::string& fingerprint,
                           const std::function<LoadedData()>& build);

} // namespace ringmaster::trainer
