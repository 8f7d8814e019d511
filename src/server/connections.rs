//! What every accepted connection goes through before TLS or HTTP sees it: a slot among a fixed
//! number (a connection past the cap is closed at once and counted), `TCP_NODELAY`, and an idle
//! timeout on reads and writes (a connection that moves no byte for that long is closed, which
//! ends idle keep-alive connections and clients that stop reading their answer).

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum_server::accept::Accept;
use futures::future::{ready, Either, Ready};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_io_timeout::TimeoutStream;

use crate::metrics::{Metrics, Rejection};

/// Accepts a TCP connection into a slot, then hands it to `inner` (TLS, or nothing).
#[derive(Clone)]
pub struct LimitedAcceptor<A> {
    inner: A,
    slots: Arc<Semaphore>,
    idle_timeout: Duration,
    metrics: Option<Metrics>,
}

impl<A> LimitedAcceptor<A> {
    /// At most `max_connections` at once, each closed after `idle_timeout` without traffic.
    pub fn new(inner: A, max_connections: usize, idle_timeout: Duration, metrics: Option<Metrics>) -> Self {
        Self {
            inner,
            slots: Arc::new(Semaphore::new(max_connections)),
            idle_timeout,
            metrics,
        }
    }

    fn admit(&self, stream: TcpStream) -> io::Result<Limited> {
        let Ok(slot) = self.slots.clone().try_acquire_owned() else {
            if let Some(metrics) = &self.metrics {
                metrics.reject(Rejection::ConnectionLimit);
            }
            return Err(io::Error::other("connection limit reached"));
        };
        stream.set_nodelay(true)?;
        let mut timed = TimeoutStream::new(stream);
        timed.set_read_timeout(Some(self.idle_timeout));
        timed.set_write_timeout(Some(self.idle_timeout));
        Ok(Limited {
            io: Box::pin(timed),
            _slot: slot,
        })
    }
}

impl<A, S> Accept<TcpStream, S> for LimitedAcceptor<A>
where
    A: Accept<Limited, S>,
{
    type Stream = A::Stream;
    type Service = A::Service;
    type Future = Either<A::Future, Ready<io::Result<(Self::Stream, Self::Service)>>>;

    fn accept(&self, stream: TcpStream, service: S) -> Self::Future {
        match self.admit(stream) {
            Ok(limited) => Either::Left(self.inner.accept(limited, service)),
            Err(err) => Either::Right(ready(Err(err))),
        }
    }
}

/// An accepted connection holding its slot until it is dropped.
pub struct Limited {
    io: Pin<Box<TimeoutStream<TcpStream>>>,
    _slot: OwnedSemaphorePermit,
}

impl AsyncRead for Limited {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.io.as_mut().poll_read(cx, buf)
    }
}

impl AsyncWrite for Limited {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.io.as_mut().poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.as_mut().poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.as_mut().poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.io.as_mut().poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}
