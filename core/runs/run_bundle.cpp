#include "runs/run_bundle.h"

#include <QDateTime>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QSaveFile>

#include <archive.h>
#include <archive_entry.h>

#include <memory>

#include "runs/environment_info.h"
#include "runs/run_files.h"
#include "runs/run_notes.h"
#include "protocol/run_layout.h"
#include "protocol/safe_files.h"

namespace ringmaster::runs {
namespace {

constexpr qint64 kCopyChunkBytes = 1 << 20;
constexpr int kFileMode = 0644;

struct ArchiveDeleter
{
    void operator()(archive* a) const { archive_write_free(a); }
};
struct EntryDeleter
{
    void operator()(archive_entry* e) const { archive_entry_free(e); }
};

la_ssize_t writeToSaveFile(archive*, void* clientData, const void* buffer, size_t length)
{
    auto* file = static_cast<QSaveFile*>(clientData);
    const qint64 written = file->write(static_cast<const char*>(buffer), static_cast<qint64>(length));
    return written == static_cast<qint64>(length) ? static_cast<la_ssize_t>(written) : -1;
}

class BundleWriter
{
public:
    BundleWriter(QSaveFile* file, const QString& outPath) : m_outPath(outPath), m_archive(archive_write_new())
    {
        if (!m_archive || archive_write_set_format_pax_restricted(m_archive.get()) != ARCHIVE_OK ||
            archive_write_add_filter_gzip(m_archive.get()) != ARCHIVE_OK ||
            archive_write_open2(m_archive.get(), file, nullptr, writeToSaveFile, nullptr, nullptr) != ARCHIVE_OK) {
            fail(QStringLiteral("cannot start the archive"));
        }
    }

    // One member holding BYTES.
    void addBytes(const QString& memberPath, const QByteArray& bytes)
    {
        writeHeader(memberPath, bytes.size(), QDateTime::currentDateTime());
        if (!bytes.isEmpty() && archive_write_data(m_archive.get(), bytes.constData(), static_cast<size_t>(bytes.size())) != bytes.size()) {
            fail(QStringLiteral("cannot write %1").arg(memberPath));
        }
        ++m_members;
    }

    // One member copied from SOURCE, in chunks (checkpoints and models can be large).
    void addFile(const QString& memberPath, const QString& source)
    {
        QFile in(source);
        if (!in.open(QIODevice::ReadOnly)) {
            throw RunsError(QStringLiteral("cannot read %1 (%2): check its permissions").arg(source, in.errorString()));
        }
        const qint64 size = in.size();
        writeHeader(memberPath, size, QFileInfo(source).lastModified());
        qint64 copied = 0;
        while (copied < size) {
            const QByteArray chunk = in.read(std::min(kCopyChunkBytes, size - copied));
            if (chunk.isEmpty()) throw RunsError(QStringLiteral("%1 changed size while it was being bundled: bundle the run again").arg(source));
            if (archive_write_data(m_archive.get(), chunk.constData(), static_cast<size_t>(chunk.size())) != chunk.size()) {
                fail(QStringLiteral("cannot write %1").arg(memberPath));
            }
            copied += chunk.size();
        }
        ++m_members;
    }

    void close()
    {
        if (archive_write_close(m_archive.get()) != ARCHIVE_OK) fail(QStringLiteral("cannot finish the archive"));
    }

    int members() const { return m_members; }

private:
    void writeHeader(const QString& memberPath, qint64 size, const QDateTime& modified)
    {
        std::unique_ptr<archive_entry, EntryDeleter> entry(archive_entry_new());
        const QByteArray path = memberPath.toUtf8();
        archive_entry_set_pathname_utf8(entry.get(), path.constData());
        archive_entry_set_filetype(entry.get(), AE_IFREG);
        archive_entry_set_perm(entry.get(), kFileMode);
        archive_entry_set_size(entry.get(), size);
        archive_entry_set_mtime(entry.get(), modified.toSecsSinceEpoch(), 0);
        if (archive_write_header(m_archive.get(), entry.get()) != ARCHIVE_OK) fail(QStringLiteral("cannot add %1").arg(memberPath));
    }

    [[noreturn]] void fail(const QString& what)
    {
        const char* detail = m_archive ? archive_error_string(m_archive.get()) : nullptr;
        throw RunsError(QStringLiteral("--out %1: %2 (%3): check free space and permissions")
                            .arg(m_outPath, what, detail ? QString::fromUtf8(detail) : QStringLiteral("libarchive error")));
    }

    QString m_outPath;
    std::unique_ptr<archive, ArchiveDeleter> m_archive;
    int m_members = 0;
};

// Every regular file under FOLDER (recursively), sorted, as paths relative to the run directory.
QStringList filesUnder(const QDir& runDir, const char* folder)
{
    QStringList files;
    const QString root = runDir.filePath(QString::fromLatin1(folder));
    if (!QFileInfo(root).isDir()) return files;
    QDirIterator it(root, QDir::Files | QDir::Hidden | QDir::NoSymLinks, QDirIterator::Subdirectories);
    while (it.hasNext()) files << runDir.relativeFilePath(it.next());
    files.sort();
    return files;
}

} // namespace

BundleResult writeRunBundle(const QString& runDirPath, const QString& out, const BundleOptions& options)
{
    requireRunDirectory(runDirPath);
    const QDir runDir(QFileInfo(runDirPath).absoluteFilePath()); // relativeFilePath() needs absolute paths on both sides
    // A link would put a file from outside the run (anything the user can read) into a bundle meant to be shared.
    if (const std::string link = protocol::symlinkProblem(QFile::encodeName(runDir.path()).toStdString()); !link.empty()) {
        throw RunsError(QStringLiteral("not bundled: %1").arg(QString::fromStdString(link)));
    }
    const QString top = QFileInfo(QDir::cleanPath(runDirPath)).fileName();

    QStringList members;
    for (const char* name : {kJobFile, kSummaryFile, kMetricsFile, kEvalFile, kScalarsFile, protocol::kSystemFile, kClassesFile,
                             kCommandsFile, kNotesFile}) {
        if (QFileInfo(runDir.filePath(QString::fromLatin1(name))).isFile()) members << QString::fromLatin1(name);
    }
    members << filesUnder(runDir, kLogsFolder);
    members << filesUnder(runDir, kSlurmFolder);   // a Slurm run's job.sbatch, job-id and batch log
    if (options.withCheckpoints) members << filesUnder(runDir, kCheckpointsFolder);
    if (options.withModel) {
        if (!QFileInfo(runDir.filePath(QString::fromLatin1(kModelFile))).isFile()) {
            throw RunsError(QStringLiteral("--with-model: %1 has no model.pt (the run did not finish): leave out --with-model").arg(runDirPath));
        }
        members << QString::fromLatin1(kModelFile);
    }

    QSaveFile file(out);
    if (!file.open(QIODevice::WriteOnly)) {
        throw RunsError(QStringLiteral("--out %1: cannot write it (%2): choose a writable file").arg(out, file.errorString()));
    }
    BundleWriter writer(&file, out);
    for (const QString& member : members) writer.addFile(top + QLatin1Char('/') + member, runDir.filePath(member));
    writer.addBytes(top + QLatin1Char('/') + QString::fromLatin1(kEnvironmentFile),
                    QJsonDocument(environmentOf(runDirPath)).toJson(QJsonDocument::Indented));
    writer.close();
    if (!file.commit()) {
        throw RunsError(QStringLiteral("--out %1: writing failed (%2): check free space and permissions").arg(out, file.errorString()));
    }
    BundleResult result;
    result.files = writer.members();
    result.bytes = QFileInfo(out).size();
    return result;
}

} // namespace ringmaster::runs
