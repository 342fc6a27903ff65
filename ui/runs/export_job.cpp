#include "ui/runs/export_job.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMessageBox>
#include <QProgressDialog>
#include <QSaveFile>
#include <QtConcurrent>

#include "runs/run_files.h"

namespace ringmaster::ui {

ExportRunner::ExportRunner(QWidget* dialogParent)
    : QObject(dialogParent)
    , m_parent(dialogParent)
{
    m_confirm = [this](const QString& path) {
        return QMessageBox::question(m_parent, tr("Replace file?"),
                                     tr("%1 already exists. Replace it?").arg(QDir::toNativeSeparators(path)),
                                     QMessageBox::Yes | QMessageBox::No, QMessageBox::No) == QMessageBox::Yes;
    };
    connect(&m_watcher, &QFutureWatcher<ExportOutcome>::finished, this, &ExportRunner::onFinished);
}

bool ExportRunner::mayWrite(const QString& target)
{
    return !QFileInfo::exists(target) || m_confirm(target);
}

bool ExportRunner::start(const QString& title, const QString& target, Work work)
{
    if (isRunning()) return false;
    m_title = title;
    if (!mayWrite(target)) {
        m_lastMessage = tr("%1: not replaced; nothing written.").arg(target);
        return false;
    }
    if (!m_progress) {
        m_progress = new QProgressDialog(m_parent);
        m_progress->setWindowModality(Qt::WindowModal);
        m_progress->setCancelButton(nullptr);   // the writes are atomic but not interruptible
        m_progress->setMinimumDuration(300);
        m_progress->setAutoClose(false);
        m_progress->setAutoReset(false);
        connect(&m_watcher, &QFutureWatcher<ExportOutcome>::progressRangeChanged, m_progress, &QProgressDialog::setRange);
        connect(&m_watcher, &QFutureWatcher<ExportOutcome>::progressValueChanged, m_progress, &QProgressDialog::setValue);
    }
    m_progress->setWindowTitle(title);
    m_progress->setLabelText(tr("Writing %1…").arg(QFileInfo(target).fileName()));
    m_progress->setRange(0, 0);
    m_progress->setValue(0);
    m_progress->show();
    m_watcher.setFuture(QtConcurrent::run([work = std::move(work)](QPromise<ExportOutcome>& promise) {
        ExportOutcome outcome;
        try {
            outcome = work(promise);
            outcome.ok = true;
        } catch (const runs::RunsError& e) {
            outcome = {};
            outcome.message = e.message();
        } catch (const std::exception& e) {
            outcome = {};
            outcome.message = QString::fromUtf8(e.what());
        }
        promise.addResult(outcome);
    }));
    return true;
}

void ExportRunner::onFinished()
{
    if (m_progress) m_progress->hide();
    const auto future = m_watcher.future();
    ExportOutcome outcome = future.resultCount() > 0 ? future.result() : ExportOutcome{false, tr("the export ended without a result"), {}};
    if (outcome.ok && outcome.finishOnGuiThread) {
        try {
            outcome.message = outcome.finishOnGuiThread();
        } catch (const runs::RunsError& e) {
            outcome.ok = false;
            outcome.message = e.message();
        }
    }
    report(outcome.ok, outcome.message);
}

void ExportRunner::report(bool ok, const QString& message)
{
    m_lastMessage = message;
    if (!ok && m_showMessages) QMessageBox::warning(m_parent, m_title, message);
    Q_EMIT finished(ok, message);
}

void ExportRunner::copyFileAtomically(const QString& source, const QString& target, QPromise<ExportOutcome>* promise)
{
    QFile in(source);
    if (!in.open(QIODevice::ReadOnly)) {
        throw runs::RunsError(QStringLiteral("%1: cannot read (%2): check that the run still holds it").arg(source, in.errorString()));
    }
    QSaveFile out(target);
    if (!out.open(QIODevice::WriteOnly)) {
        throw runs::RunsError(QStringLiteral("%1: cannot write (%2): choose a writable folder").arg(target, out.errorString()));
    }
    constexpr qint64 kChunk = 1 << 20;
    const qint64 total = in.size();
    const int steps = static_cast<int>(std::max<qint64>(1, (total + kChunk - 1) / kChunk));
    if (promise) promise->setProgressRange(0, steps);
    int done = 0;
    while (!in.atEnd()) {
        const QByteArray chunk = in.read(kChunk);
        if (chunk.isEmpty() && in.error() != QFileDevice::NoError) {
            out.cancelWriting();
            throw runs::RunsError(QStringLiteral("%1: read failed (%2)").arg(source, in.errorString()));
        }
        if (out.write(chunk) != chunk.size()) {
            out.cancelWriting();
            throw runs::RunsError(QStringLiteral("%1: write failed (%2): check free space").arg(target, out.errorString()));
        }
        if (promise) promise->setProgressValue(++done);
    }
    if (!out.commit()) {
        throw runs::RunsError(QStringLiteral("%1: cannot write (%2): check free space and permissions").arg(target, out.errorString()));
    }
}

} // namespace ringmaster::ui
