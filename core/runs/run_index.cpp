#include "runs/run_index.h"

#include "runs/run_liveness.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>

#include <cstdio>
#include <sys/stat.h>

#include "runs/run_files.h"

namespace ringmaster::runs {
namespace {

// recordSourceFiles(), made once (the listing asks per run, from several threads: a static is safe).
const QStringList& sourceNames()
{
    static const QStringList names = recordSourceFiles();
    return names;
}

qint64 nanoseconds(const struct timespec& time)
{
    return static_cast<qint64>(time.tv_sec) * 1000000000LL + time.tv_nsec;
}

void saveIndex(const QDir& dir, const QJsonObject& files, const RunRecord& record)
{
    const QJsonObject index{{QStringLiteral("format"), kIndexFormat}, {QStringLiteral("files"), files},
                            {QStringLiteral("record"), storedRecord(record)}};
    // Written to a temporary name and renamed over the old index, without fsync: it is a cache, and a torn
    // one (after a power cut) is invalid JSON or mismatched and simply rebuilt. fsync made a cold listing
    // of 1,000 runs wait seconds on the disk.
    const QString path = dir.filePath(QString::fromLatin1(kIndexFile));
    const QString temporary = path + QStringLiteral(".tmp-") + QString::number(QCoreApplication::applicationPid());
    QFile file(temporary);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) return;
    const QByteArray bytes = QJsonDocument(index).toJson(QJsonDocument::Compact);
    const bool written = file.write(bytes) == bytes.size() && file.flush();
    file.close();
    if (!written || std::rename(QFile::encodeName(temporary).constData(), QFile::encodeName(path).constData()) != 0) {
        QFile::remove(temporary);
    }
}

} // namespace

RunFingerprint fingerprintRun(const QString& dirPath)
{
    RunFingerprint fingerprint;
    const QStringList& names = sourceNames();
    const QByteArray base = QFile::encodeName(dirPath) + '/';
    for (int i = 0; i < names.size() && i < static_cast<int>(fingerprint.files.size()); ++i) {
        struct stat info {};
        const QByteArray path = base + names[i].toLatin1();
        if (::stat(path.constData(), &info) != 0) continue;
        FileStamp& stamp = fingerprint.files[static_cast<std::size_t>(i)];
        stamp.exists = true;
        stamp.isFile = S_ISREG(info.st_mode);
        stamp.size = static_cast<qint64>(info.st_size);
        stamp.mtimeNs = nanoseconds(info.st_mtim);
        stamp.ctimeNs = nanoseconds(info.st_ctim);
    }
    return fingerprint;
}

QJsonObject RunFingerprint::toJson() const
{
    QJsonObject object;
    const QStringList& names = sourceNames();
    for (int i = 0; i < names.size(); ++i) {
        const FileStamp& stamp = files[static_cast<std::size_t>(i)];
        if (!stamp.exists) {
            object.insert(names[i], QJsonValue(QJsonValue::Null));
            continue;
        }
        // As strings: a JSON double holds only 53 bits, and nanoseconds since 1970 need more.
        object.insert(names[i], QJsonObject{{QStringLiteral("size"), QString::number(stamp.size)},
                                            {QStringLiteral("mtime_ns"), QString::number(stamp.mtimeNs)}});
    }
    return object;
}

const FileStamp& RunFingerprint::stamp(const char* fileName) const
{
    const QStringList& names = sourceNames();
    const int index = names.indexOf(QLatin1String(fileName));
    Q_ASSERT(index >= 0);
    return files[static_cast<std::size_t>(index)];
}

bool RunFingerprint::isRun() const
{
    for (const char* marker : {kJobFile, kSummaryFile, kMetricsFile, kScalarsFile}) {
        if (stamp(marker).isFile) return true;
    }
    return false;
}

QJsonObject storedRecord(const RunRecord& record)
{
    QJsonObject stored = record.toJson();
    stored.remove(QStringLiteral("name"));
    stored.remove(QStringLiteral("path"));
    return stored;
}

RunRecord recordFromStored(const QJsonObject& stored, const QString& dir, const QString& name)
{
    RunRecord record = RunRecord::fromJson(stored);
    record.path = dir;
    record.name = name;
    return record;
}

RunRecord loadRunRecord(const QString& dirPath, IndexUse* use)
{
    const RunFingerprint fingerprint = fingerprintRun(dirPath);
    RunRecord record;
    if (auto indexed = indexedRunRecord(dirPath, fingerprint)) {
        if (use) *use = IndexUse::Fresh;
        record = *std::move(indexed);
    } else {
        if (use) *use = IndexUse::Rebuilt;
        record = rebuildRunRecord(dirPath, fingerprint);
    }
    applyRunLiveness(&record);   // never stored in the index: see run_liveness.h
    return record;
}

std::optional<RunRecord> indexedRunRecord(const QString& dirPath, const RunFingerprint& fingerprint)
{
    QFile indexFile(QDir(dirPath).filePath(QString::fromLatin1(kIndexFile)));
    if (!indexFile.open(QIODevice::ReadOnly)) return std::nullopt;
    const QJsonObject index = QJsonDocument::fromJson(indexFile.readAll()).object();
    if (index.value(QStringLiteral("format")).toInt() != kIndexFormat || index.value(QStringLiteral("files")).toObject() != fingerprint.toJson() ||
        !index.value(QStringLiteral("record")).isObject()) {
        return std::nullopt;
    }
    return recordFromStored(index.value(QStringLiteral("record")).toObject(), dirPath, QFileInfo(QDir::cleanPath(dirPath)).fileName());
}

RunRecord rebuildRunRecord(const QString& dirPath, const RunFingerprint& fingerprint)
{
    RunRecord record = readRunRecord(dirPath);
    saveIndex(QDir(dirPath), fingerprint.toJson(), record);
    return record;
}

} // namespace ringmaster::runs
