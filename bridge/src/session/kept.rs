//! The params of a request that may ask for input (M2), kept for its next round.
//!
//! A stateless server asks for input with a result; the next round is the same
//! request again, with the answers. So the bridge keeps each such request until
//! its complete result comes. A large one waits in a temporary file instead of
//! memory: holding a 64 MiB argument while its 64 MiB result is read
//! doubled the bridge's peak, and only a request that asks for input reads it
//! again. The file has no name from its creation (`tempfile::tempfile`, in the
//! directory of `TMPDIR`) and only the bridge's account may read it; it goes
//! with the request. When no file can be written, the params stay in memory.

use crate::wire::pieces::Sink;
use crate::wire::shallow::ShallowObject;
use crate::wire::text::SharedLine;
use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

/// The params of round 1, without `_meta`.
#[derive(Debug)]
pub(crate) enum KeptParams {
    /// Params below the size of a file: the common case costs one share of them.
    InMemory(Arc<ShallowObject<'static>>),
    /// Large params: in memory until a blocking task has written them to a file.
    Large(Arc<Mutex<Place>>),
}

#[derive(Debug)]
pub(crate) enum Place {
    Memory(Arc<ShallowObject<'static>>),
    /// The params as one JSON object.
    File(File),
}

impl KeptParams {
    /// Keeps `params`. From `file_from` bytes of JSON text on, a blocking task
    /// writes them to a file, and the memory goes when it is written (the upstream
    /// writer holds its own share until the request is sent); until then, and when
    /// the file cannot be written, they are kept in memory.
    pub fn keep(params: Arc<ShallowObject<'static>>, file_from: usize) -> Self {
        if json_len(&params) < file_from {
            return Self::InMemory(params);
        }
        let place = Arc::new(Mutex::new(Place::Memory(params.clone())));
        let weak = Arc::downgrade(&place);
        tokio::task::spawn_blocking(move || move_to_file(&params, &weak));
        Self::Large(place)
    }

    /// The params, read back from their file when they are in one.
    pub async fn load(&self) -> io::Result<Arc<ShallowObject<'static>>> {
        let file = match self {
            Self::InMemory(params) => return Ok(params.clone()),
            Self::Large(place) => match &*lock(place) {
                Place::Memory(params) => return Ok(params.clone()),
                Place::File(file) => file.try_clone()?,
            },
        };
        tokio::task::spawn_blocking(move || read_back(file))
            .await
            .map_err(io::Error::other)?
    }

    /// Whether the params wait in a file (for tests).
    #[cfg(test)]
    fn in_file(&self) -> bool {
        matches!(self, Self::Large(place) if matches!(&*lock(place), Place::File(_)))
    }
}

fn lock(place: &Mutex<Place>) -> MutexGuard<'_, Place> {
    // The place is only ever replaced whole: a panic cannot leave it half written.
    place.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The length of the params as a JSON object, but for the escapes of names.
fn json_len(params: &ShallowObject<'_>) -> usize {
    params
        .iter()
        .map(|(name, value)| name.len() + value.len() + 4)
        .sum()
}

fn move_to_file(params: &ShallowObject<'_>, place: &Weak<Mutex<Place>>) {
    // A request whose complete result came first needs no file.
    if place.strong_count() == 0 {
        return;
    }
    let Ok(file) = write_file(params) else {
        return;
    };
    if let Some(place) = place.upgrade() {
        *lock(&place) = Place::File(file);
    }
}

fn write_file(params: &ShallowObject<'_>) -> io::Result<File> {
    let mut out = FileSink {
        file: BufWriter::new(tempfile::tempfile()?),
        error: None,
    };
    params.write_into(&mut out);
    if let Some(error) = out.error {
        return Err(error);
    }
    out.file
        .into_inner()
        .map_err(io::IntoInnerError::into_error)
}

/// A file as the sink of `ShallowObject::write_into`, whose writes cannot fail:
/// the first error is kept, and the writes after it are dropped.
struct FileSink {
    file: BufWriter<File>,
    error: Option<io::Error>,
}

impl Write for FileSink {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if self.error.is_none()
            && let Err(error) = self.file.write_all(bytes)
        {
            self.error = Some(error);
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Sink<'_> for FileSink {
    fn text(&mut self, text: &[u8]) {
        let _ = self.write(text);
    }

    fn bytes(&mut self, bytes: &[u8]) {
        let _ = self.write(bytes);
    }
}

fn read_back(mut file: File) -> io::Result<Arc<ShallowObject<'static>>> {
    file.seek(SeekFrom::Start(0))?;
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    let line: SharedLine = Arc::new(text);
    let params = ShallowObject::parse(&line)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "not the JSON object written"))?
        .into_shared(&line);
    Ok(Arc::new(params))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::Duration;

    fn params(text: &str) -> Arc<ShallowObject<'static>> {
        let line: SharedLine = Arc::new(text.to_owned());
        Arc::new(ShallowObject::parse(&line).unwrap().into_shared(&line))
    }

    async fn settled(kept: &KeptParams) {
        // The blocking task holds the weak share and its own params until it ends.
        for _ in 0..10_000 {
            if kept.in_file() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    #[tokio::test]
    async fn small_params_stay_in_memory() {
        let original = params(r#"{"name":"echo","arguments":{"text":"hi"}}"#);
        let kept = KeptParams::keep(original.clone(), 1 << 20);
        assert!(!kept.in_file());
        assert!(Arc::ptr_eq(&kept.load().await.unwrap(), &original));
    }

    #[tokio::test]
    async fn large_params_come_back_from_their_file_as_they_were() {
        let text = r#"{"name":"echo","arguments":{"text":"a \"quoted\" \u00e9 text"},"we\"ird":[1,2.5e3,null]}"#;
        let original = params(text);
        let kept = KeptParams::keep(original.clone(), 16);
        settled(&kept).await;
        assert!(kept.in_file());
        let back = kept.load().await.unwrap();
        assert_eq!(*back, *original);
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&back.to_json()).unwrap(),
            json!({"name": "echo", "arguments": {"text": "a \"quoted\" é text"}, "we\"ird": [1, 2.5e3, null]})
        );
        // A second load reads the same file again.
        assert_eq!(*kept.load().await.unwrap(), *original);
    }

    #[tokio::test]
    async fn the_memory_goes_once_the_file_is_written() {
        let original = params(r#"{"arguments":{"text":"a long enough text"}}"#);
        let kept = KeptParams::keep(original.clone(), 16);
        settled(&kept).await;
        // Only this test's share is left: the place and the task let theirs go.
        for _ in 0..10_000 {
            if Arc::strong_count(&original) == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        assert_eq!(Arc::strong_count(&original), 1);
    }

    #[test]
    fn the_length_counts_names_values_and_their_punctuation() {
        let object = params(r#"{"a":1,"bc":"x"}"#);
        assert_eq!(json_len(&object), r#""a":1,"bc":"x","#.len());
    }
}
