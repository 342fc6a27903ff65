#include "runs/run_listing.h"

#include "runs/run_liveness.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <algorithm>
#include <cstring>
#include <atomic>
#include <dirent.h>
#include <functional>
#include <sys/stat.h>
#include <thread>
#include <time.h>
#include <vector>

#include "runs/root_index.h"
#include "runs/run_files.h"
#include "runs/run_index.h"

namespace ringmaster::runs {
namespace {

// Threads that look into runs' folders at once: stat and small reads wait on the disk, not the CPU, and a
// disk (an SSD, a network volume) serves several at a time.
constexpr unsigned kLookingThreads = 8;
constexpr std::size_t kRunsPerThread = 16;   // fewer runs than this are not worth a thread

qint64 nanoseconds(const struct timespec& time)
{
    return static_cast<qint64>(time.tv_sec) * 1000000000LL + time.tv_nsec;
}

qint64 nowNs()
{
    struct timespec now {};
    ::clock_gettime(CLOCK_REALTIME, &now);
    return nanoseconds(now);
}

struct Child
{
    QString name;
    quint64 inode = 0;
};

// The entries of ROOT but . and .., in the order of their inodes (their folders' inodes are then read in
// the order the disk holds them).
std::vector<Child> childrenOf(const QString& root)
{
    std::vector<Child> children;
    DIR* folder = ::opendir(QFile::encodeName(root).constData());
    if (!folder) return children;
    while (const dirent* entry = ::readdir(folder)) {
        if (std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0) continue;
        // Only folders (or links and unknown types, which stat tells).
        if (entry->d_type != DT_DIR && entry->d_type != DT_LNK && entry->d_type != DT_UNKNOWN) continue;
        children.push_back({QFile::decodeName(entry->d_name), static_cast<quint64>(entry->d_ino)});
    }
    ::closedir(folder);
    std::sort(children.begin(), children.end(), [](const Child& a, const Child& b) { return a.inode < b.inode; });
    return children;
}

// False when PATH is not a folder (after links).
bool folderStamp(const QString& path, FolderStamp* stamp)
{
    struct stat info {};
    if (::stat(QFile::encodeName(path).constData(), &info) != 0 || !S_ISDIR(info.st_mode)) return false;
    stamp->device = static_cast<quint64>(info.st_dev);
    stamp->inode = static_cast<quint64>(info.st_ino);
    stamp->mtimeNs = nanoseconds(info.st_mtim);
    stamp->ctimeNs = nanoseconds(info.st_ctim);
    return true;
}

bool quiet(qint64 latestChangeNs, qint64 now)
{
    return now - latestChangeNs >= static_cast<qint64>(kQuietSeconds) * 1000000000LL;
}

// See root_index.h: the run ended (summary.json written after job.json and every CSV) and none of its
// source files changed for kQuietSeconds. (The folder's own times are not asked: the listing itself
// changes them when it writes the run's index.)
bool settled(const RunFingerprint& fingerprint, qint64 now)
{
    const FileStamp& summary = fingerprint.stamp(kSummaryFile);
    if (!summary.isFile) return false;
    for (const char* name : {kJobFile, kMetricsFile, kEvalFile, kScalarsFile}) {
        const FileStamp& file = fingerprint.stamp(name);
        if (file.exists && file.mtimeNs > summary.mtimeNs) return false;
    }
    qint64 latest = 0;
    for (const FileStamp& file : fingerprint.files) latest = std::max({latest, file.mtimeNs, file.ctimeNs});
    return quiet(latest, now);
}

void forEachParallel(std::size_t count, const std::function<void(std::size_t)>& work)
{
    const auto threads = static_cast<unsigned>(std::min<std::size_t>(kLookingThreads, count / kRunsPerThread));
    if (threads <= 1) {
        for (std::size_t i = 0; i < count; ++i) work(i);
        return;
    }
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (unsigned t = 0; t < threads; ++t) {
        pool.emplace_back([&] {
            for (std::size_t i = next++; i < count; i = next++) work(i);
        });
    }
    for (auto& thread : pool) thread.join();
}

// A child folder the root's index could not answer for on its stat alone.
struct Pending
{
    QString name, path;
    FolderStamp folder;
    const RootIndexEntry* old = nullptr;
    RootIndexEntry entry;
    bool keep = false;   // the entry goes into the new index
    RunFingerprint fingerprint;
    RunRecord record;
    enum class How { NotRun, Unchanged, RunIndex, Reread } how = How::NotRun;
};

// What the indexes tell without reading the run's files (several threads at once): stats and small reads.
void lookInto(Pending* p)
{
    p->fingerprint = fingerprintRun(p->path);
    p->entry.folder = p->folder;
    if (!p->fingerprint.isRun()) {
        // Remembered only when the folder has been still for a while: a run being created in it changes it.
        p->entry.isRun = false;
        p->keep = quiet(std::max(p->folder.mtimeNs, p->folder.ctimeNs), nowNs());
        return;
    }
    p->entry.isRun = true;
    p->entry.files = p->fingerprint.toJson();
    p->keep = true;
    if (p->old && p->old->isRun && p->old->files == p->entry.files) {
        p->entry.record = p->old->record;
        p->record = recordFromStored(p->old->record, p->path, p->name);
        p->how = Pending::How::Unchanged;
    } else if (auto record = indexedRunRecord(p->path, p->fingerprint)) {
        p->record = *std::move(record);
        p->entry.record = storedRecord(p->record);
        p->how = Pending::How::RunIndex;
    } else {
        p->how = Pending::How::Reread;   // by readFiles(), on the listing's thread
    }
    p->entry.settled = settled(p->fingerprint, nowNs());
}

// Reads a run's files (on the listing's thread). The record the root's index stores is made afterwards, for
// all the runs read at once.
void readFiles(Pending* p)
{
    p->record = rebuildRunRecord(p->path, p->fingerprint);
    // Saving the run's index changed the folder's times: remember them as they are after it, unless a
    // source file changed meanwhile (then the entry keeps the times from before, and is looked into again).
    FolderStamp after;
    if (folderStamp(p->path, &after) && !(after == p->folder) && fingerprintRun(p->path) == p->fingerprint) p->entry.folder = after;
}

bool sameEntry(const RootIndexEntry* old, const RootIndexEntry& entry)
{
    return old && old->folder == entry.folder && old->isRun == entry.isRun && old->settled == entry.settled &&
           (!entry.isRun || old->files == entry.files);
}

void listRoot(const QString& rootPath, QList<RunRecord>* runs, ListingCounts* counts)
{
    const RootIndex old = RootIndex::load(rootPath);
    RootIndex fresh;
    std::vector<Pending> pending;
    const QString prefix = rootPath.endsWith(QLatin1Char('/')) ? rootPath : rootPath + QLatin1Char('/');
    for (const Child& child : childrenOf(rootPath)) {
        const QString path = prefix + child.name;
        FolderStamp folder;
        if (!folderStamp(path, &folder)) continue;
        const RootIndexEntry* entry = old.find(child.name);
        if (entry && entry->folder == folder && (!entry->isRun || entry->settled)) {
            fresh.put(child.name, *entry);
            if (entry->isRun) {
                runs->append(recordFromStored(entry->record, path, child.name));
                ++counts->trusted;
            }
            continue;
        }
        Pending p;
        p.name = child.name;
        p.path = path;
        p.folder = folder;
        p.old = entry;
        pending.push_back(std::move(p));
    }
    forEachParallel(pending.size(), [&pending](std::size_t i) { lookInto(&pending[i]); });
    for (Pending& p : pending) {
        if (p.how == Pending::How::Reread) readFiles(&p);
    }
    bool changed = false;
    for (Pending& p : pending) {
        if (p.how == Pending::How::Reread) p.entry.record = storedRecord(p.record);
        if (p.keep) fresh.put(p.name, p.entry);
        changed = changed || p.keep != (p.old != nullptr) || (p.keep && !sameEntry(p.old, p.entry));
        switch (p.how) {
        case Pending::How::NotRun: continue;
        case Pending::How::Unchanged: ++counts->unchanged; break;
        case Pending::How::RunIndex: ++counts->runIndex; break;
        case Pending::How::Reread: ++counts->reread; break;
        }
        runs->append(std::move(p.record));
    }
    // Folders gone since: their entries are dropped.
    if (changed || fresh.size() != old.size()) fresh.save(rootPath);
}

} // namespace

QList<RunRecord> listRuns(const QStringList& roots, ListingCounts* counts)
{
    for (const QString& root : roots) {
        const QFileInfo info(root);
        if (!info.exists()) throw RunsError(QStringLiteral("--root %1: no such folder: give the folder your runs are in (the launcher's --output-root)").arg(root));
        if (!info.isDir()) throw RunsError(QStringLiteral("--root %1 is a file: give the folder your runs are in").arg(root));
    }
    ListingCounts ignored;
    if (!counts) counts = &ignored;
    QList<RunRecord> runs;
    for (const QString& root : roots) listRoot(QDir::cleanPath(QFileInfo(root).absoluteFilePath()), &runs, counts);
    for (RunRecord& run : runs) applyRunLiveness(&run);   // never from an index: see run_liveness.h
    std::stable_sort(runs.begin(), runs.end(), [](const RunRecord& a, const RunRecord& b) {
        if (a.started.isValid() != b.started.isValid()) return a.started.isValid();
        if (a.started != b.started) return a.started < b.started;
        return a.name < b.name;
    });
    return runs;
}

} // namespace ringmaster::runs
