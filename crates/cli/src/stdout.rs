//! Standard output for reports: a reader that stops early (`neardup eval ... | head`) is not
//! an error. Once the pipe is closed, the rest of the report is dropped and the command
//! ends as it would have, with its own exit code.

use std::io::{self, StdoutLock, Write};

/// Locked standard output that drops writes once the reader has gone.
pub struct Stdout {
    inner: StdoutLock<'static>,
    closed: bool,
}

/// Standard output for a command's report.
pub fn stdout() -> Stdout {
    Stdout { inner: io::stdout().lock(), closed: false }
}

impl Stdout {
    fn closed_on<T>(&mut self, result: io::Result<T>, unwritten: T) -> io::Result<T> {
        match result {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(unwritten)
            }
            other => other,
        }
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        let result = self.inner.write(buf);
        self.closed_on(result, buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let result = self.inner.flush();
        self.closed_on(result, ())
    }
}

impl Drop for Stdout {
    fn drop(&mut self) {
        // Flushed here, not by the lock's drop, so a closed pipe is not reported there.
        let _ = self.flush();
    }
}
