#include "supervisor/slurm/file_tail.h"

#include <QFile>
#include <QFileInfo>

namespace ringmaster::supervisor {

QStringList FileTail::poll()
{
    QStringList lines;
    QFile file(m_path);
    if (!file.open(QIODevice::ReadOnly)) return lines;
    const qint64 size = file.size();
    if (size < m_offset) { // truncated or rewritten: read it again from its start
        m_offset = 0;
        m_partial.clear();
    }
    if (size == m_offset || !file.seek(m_offset)) return lines;
    const QByteArray chunk = file.read(std::min(size - m_offset, kMaxBytesPerPoll));
    m_offset += chunk.size();
    m_partial.append(chunk);
    qsizetype start = 0;
    for (qsizetype end = m_partial.indexOf('\n'); end >= 0; end = m_partial.indexOf('\n', start)) {
        QByteArray line = m_partial.mid(start, end - start);
        if (line.endsWith('\r')) line.chop(1);
        lines.append(QString::fromUtf8(line));
        start = end + 1;
    }
    m_partial.remove(0, start);
    return lines;
}

void FileTail::skipToEnd()
{
    m_offset = QFileInfo(m_path).size();
    m_partial.clear();
}

} // namespace ringmaster::supervisor
