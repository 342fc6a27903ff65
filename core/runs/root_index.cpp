#include "runs/root_index.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDir>
#include <QFileInfo>
#include <QFile>
#include <QJsonDocument>
#include <QStandardPaths>

#include <cstdio>
#include <unistd.h>

namespace ringmaster::runs {
namespace {

QString cachePathOf(const QString& root)
{
    const QByteArray hash = QCryptographicHash::hash(QFile::encodeName(root), QCryptographicHash::Sha1).toHex();
    return QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation) + QStringLiteral("/ringmaster/runs-index/") +
           QString::fromLatin1(hash) + QStringLiteral(".json");
}

QString inRootPath(const QString& root)
{
    return QDir(root).filePath(QString::fromLatin1(kRootIndexFile));
}

// 64-bit numbers as strings: a JSON double holds only 53 bits.
QString text(qint64 value) { return QString::number(value); }
QString text(quint64 value) { return QString::number(value); }

QJsonObject toJson(const RootIndexEntry& entry)
{
    QJsonObject object{{QStringLiteral("dev"), text(entry.folder.device)},
                       {QStringLiteral("ino"), text(entry.folder.inode)},
                       {QStringLiteral("mtime_ns"), text(entry.folder.mtimeNs)},
                       {QStringLiteral("ctime_ns"), text(entry.folder.ctimeNs)},
                       {QStringLiteral("run"), entry.isRun}};
    if (entry.isRun) {
        object.insert(QStringLiteral("settled"), entry.settled);
        object.insert(QStringLiteral("files"), entry.files);
        object.insert(QStringLiteral("record"), entry.record);
    }
    return object;
}

bool fromJson(const QJsonObject& object, RootIndexEntry* entry)
{
    bool ok[4] = {};
    entry->folder.device = object.value(QStringLiteral("dev")).toString().toULongLong(&ok[0]);
    entry->folder.inode = object.value(QStringLiteral("ino")).toString().toULongLong(&ok[1]);
    entry->folder.mtimeNs = object.value(QStringLiteral("mtime_ns")).toString().toLongLong(&ok[2]);
    entry->folder.ctimeNs = object.value(QStringLiteral("ctime_ns")).toString().toLongLong(&ok[3]);
    if (!ok[0] || !ok[1] || !ok[2] || !ok[3] || !object.value(QStringLiteral("run")).isBool()) return false;
    entry->isRun = object.value(QStringLiteral("run")).toBool();
    if (!entry->isRun) return true;
    entry->settled = object.value(QStringLiteral("settled")).toBool();
    entry->files = object.value(QStringLiteral("files")).toObject();
    entry->record = object.value(QStringLiteral("record")).toObject();
    return !entry->files.isEmpty() && !entry->record.isEmpty();
}

} // namespace

QString rootIndexPath(const QString& root)
{
    return ::access(QFile::encodeName(root).constData(), W_OK) == 0 ? inRootPath(root) : cachePathOf(root);
}

RootIndex RootIndex::load(const QString& root)
{
    RootIndex index;
    const QString preferred = rootIndexPath(root);
    for (const QString& path : {preferred, preferred == inRootPath(root) ? cachePathOf(root) : inRootPath(root)}) {
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly)) continue;
        const QJsonObject document = QJsonDocument::fromJson(file.readAll()).object();
        if (document.value(QStringLiteral("format")).toInt() != kRootIndexFormat) continue;
        const QJsonObject runs = document.value(QStringLiteral("runs")).toObject();
        index.m_entries.reserve(runs.size());
        for (auto it = runs.constBegin(); it != runs.constEnd(); ++it) {
            RootIndexEntry entry;
            if (fromJson(it.value().toObject(), &entry)) index.m_entries.insert(it.key(), entry);
        }
        break;
    }
    return index;
}

void RootIndex::save(const QString& root) const
{
    QJsonObject runs;
    for (auto it = m_entries.constBegin(); it != m_entries.constEnd(); ++it) runs.insert(it.key(), toJson(it.value()));
    const QByteArray bytes = QJsonDocument(QJsonObject{{QStringLiteral("format"), kRootIndexFormat}, {QStringLiteral("runs"), runs}})
                                 .toJson(QJsonDocument::Compact);
    const QString path = rootIndexPath(root);
    if (path != inRootPath(root) && !QDir().mkpath(QFileInfo(path).absolutePath())) return;
    // Unique among processes and among the threads of one (the app lists from a worker thread).
    const QString temporary = path + QStringLiteral(".tmp-%1-%2").arg(QCoreApplication::applicationPid()).arg(reinterpret_cast<quintptr>(this));
    QFile file(temporary);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) return;
    const bool written = file.write(bytes) == bytes.size() && file.flush();
    file.close();
    if (!written || std::rename(QFile::encodeName(temporary).constData(), QFile::encodeName(path).constData()) != 0) {
        QFile::remove(temporary);
    }
}

const RootIndexEntry* RootIndex::find(const QString& name) const
{
    const auto it = m_entries.constFind(name);
    return it == m_entries.constEnd() ? nullptr : &it.value();
}

} // namespace ringmaster::runs
