//! The upstream of the moment, outside the session.

use super::UpstreamControl;
use std::sync::{Arc, Mutex};

/// The upstream of the moment, for the watchdog, which must stop it even when the
/// session task is stuck.
#[derive(Debug, Clone, Default)]
pub(crate) struct UpstreamSlot(Arc<Mutex<Option<Arc<dyn UpstreamControl>>>>);

impl UpstreamSlot {
    pub(crate) fn set(&self, control: Arc<dyn UpstreamControl>) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(control);
        }
    }

    /// Kills the upstream of the moment at once, if there is one.
    pub(crate) fn kill_now(&self) {
        if let Ok(slot) = self.0.lock()
            && let Some(control) = slot.as_ref()
        {
            control.kill_now();
        }
    }
}
