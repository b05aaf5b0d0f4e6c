//! Stdin and stdout of the bridge, in the reactor when they can be.
//!
//! VS Code starts a stdio server through libuv, which gives it the ends of Unix
//! socket pairs on POSIX; a shell, and Rust's `Command`, give pipes. Either kind
//! waits in the reactor like the upstream's pipes, while tokio's `stdin()` and
//! `stdout()` do each read and write on a blocking thread: two thread hops per
//! frame. A file or a terminal keeps those. So does a descriptor that is also
//! stderr (`2>&1`): the non-blocking mode would reach the log lines too, which
//! must never fail.

use tokio::io::{AsyncRead, AsyncWrite};

pub type Input = Box<dyn AsyncRead + Send + Unpin>;
pub type Output = Box<dyn AsyncWrite + Send + Unpin>;

/// Stdin.
pub fn input() -> Input {
    #[cfg(unix)]
    match reactor::stdin() {
        Some(reactor::End::Pipe(fd)) => {
            if let Ok(pipe) = tokio::net::unix::pipe::Receiver::from_owned_fd(fd) {
                return Box::new(pipe);
            }
        }
        Some(reactor::End::Socket(fd)) => {
            if let Some(socket) = reactor::socket(fd) {
                return Box::new(socket);
            }
        }
        None => {}
    }
    Box::new(tokio::io::stdin())
}

/// Stdout. The bridge never closes it: VS Code reads it until the bridge exits.
pub fn output() -> Output {
    #[cfg(unix)]
    match reactor::stdout() {
        Some(reactor::End::Pipe(fd)) => {
            if let Ok(pipe) = tokio::net::unix::pipe::Sender::from_owned_fd(fd) {
                return Box::new(pipe);
            }
        }
        Some(reactor::End::Socket(fd)) => {
            if let Some(socket) = reactor::socket(fd) {
                return Box::new(socket);
            }
        }
        None => {}
    }
    Box::new(tokio::io::stdout())
}

/// Resolves when VS Code has closed its end of stdin (or shut down its writing
/// side of the socket), while lines may still wait unread: the kernel reports the
/// hangup before the data is read. Never for a file or a terminal. It uses a
/// second descriptor of stdin, registered only when this is first polled.
pub async fn input_hangup() {
    #[cfg(unix)]
    if let Some(end) = reactor::stdin().and_then(reactor::Watched::new) {
        return end.closed().await;
    }
    std::future::pending().await
}

#[cfg(unix)]
mod reactor {
    use std::io;
    use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    use tokio::io::Interest;
    use tokio::net::UnixStream;
    use tokio::net::unix::pipe;

    /// A new descriptor of stdin or stdout, by what it is.
    pub(super) enum End {
        Pipe(OwnedFd),
        Socket(OwnedFd),
    }

    pub(super) fn stdin() -> Option<End> {
        end_of(std::io::stdin().as_fd())
    }

    pub(super) fn stdout() -> Option<End> {
        end_of(std::io::stdout().as_fd())
    }

    fn end_of(fd: BorrowedFd<'_>) -> Option<End> {
        let (file_type, identity) = describe(fd)?;
        // A closed stderr is no other file.
        if describe(std::io::stderr().as_fd()).is_some_and(|(_, stderr)| stderr == identity) {
            return None;
        }
        let owned = fd.try_clone_to_owned().ok()?;
        if file_type.is_fifo() {
            Some(End::Pipe(owned))
        } else if file_type.is_socket() {
            Some(End::Socket(owned))
        } else {
            None
        }
    }

    /// The type of the file behind `fd` and its identity (device, inode).
    fn describe(fd: BorrowedFd<'_>) -> Option<(std::fs::FileType, (u64, u64))> {
        let metadata = std::fs::File::from(fd.try_clone_to_owned().ok()?)
            .metadata()
            .ok()?;
        Some((metadata.file_type(), (metadata.dev(), metadata.ino())))
    }

    pub(super) fn socket(fd: OwnedFd) -> Option<UnixStream> {
        let socket = std::os::unix::net::UnixStream::from(fd);
        socket.set_nonblocking(true).ok()?;
        UnixStream::from_std(socket).ok()
    }

    /// Stdin, watched for its hangup only.
    pub(super) enum Watched {
        Pipe(pipe::Receiver),
        Socket(UnixStream),
    }

    impl Watched {
        pub(super) fn new(end: End) -> Option<Self> {
            match end {
                End::Pipe(fd) => pipe::Receiver::from_owned_fd(fd).ok().map(Self::Pipe),
                End::Socket(fd) => socket(fd).map(Self::Socket),
            }
        }

        pub(super) async fn closed(&self) {
            while let Ok(ready) = self.ready().await {
                if ready.is_read_closed() {
                    return;
                }
                self.clear_readable();
            }
            std::future::pending().await
        }

        async fn ready(&self) -> io::Result<tokio::io::Ready> {
            match self {
                Self::Pipe(pipe) => pipe.ready(Interest::READABLE).await,
                Self::Socket(socket) => socket.ready(Interest::READABLE).await,
            }
        }

        /// Readable is also reported for data, which is the reader's: the readiness
        /// is cleared without a read.
        fn clear_readable(&self) {
            let nothing_read = || Err::<(), _>(io::ErrorKind::WouldBlock.into());
            let _ = match self {
                Self::Pipe(pipe) => pipe.try_io(nothing_read),
                Self::Socket(socket) => socket.try_io(Interest::READABLE, nothing_read),
            };
        }
    }
}
