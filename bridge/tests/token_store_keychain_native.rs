//! The keychain store against the keychain of macOS or Windows, checked as a user
//! would with the tools of the system (`security`, `cmdkey`). These run on the
//! macOS and Windows runners of the workflow (`script/ci/platform-tests`): on macOS
//! against a keychain that the job creates, unlocks and makes the default; on
//! Windows against the Credential Manager of the runner's account. One test, so
//! that nothing else touches the items of the service while it runs.
#![cfg(any(target_os = "macos", windows))]

use crate::logout::logout_here as logout;
use mcp_bridge_vscode::config::TokenStoreChoice;
use mcp_bridge_vscode::internals::auth::store::{
    ClientOption, EntryKey, SERVICE, StoreKind, StoredSignIn, open,
};
use std::process::Command;

fn entry(url: &str) -> EntryKey {
    EntryKey::new(
        url,
        "default",
        "http://127.0.0.1:41894/callback",
        ClientOption::Default,
    )
}

/// A sign-in larger than one Windows credential (2560 bytes): it is kept in parts.
fn large_sign_in(access_token: &str) -> StoredSignIn {
    StoredSignIn {
        issuer: "https://as.example.com".into(),
        resource: "https://127.0.0.1:9/mcp".into(),
        client_id: "client-1".into(),
        client_secret: None,
        access_token: format!("{access_token}-{}", "t".repeat(6000)).into(),
        refresh_token: Some("refresh-1".into()),
        expires_at: Some(4_102_444_800),
        scope: Some("mcp".into()),
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The items of the service that the system's own tool lists, as text.
#[cfg(windows)]
fn items_of_the_service() -> Vec<String> {
    let output = Command::new("cmdkey").arg("/list").output().unwrap();
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| line.contains("Target:") && line.contains(SERVICE))
        .map(|line| line.trim().to_owned())
        .collect()
}

/// The items of the service that the system's own tool finds: the index, by its
/// account (`security` finds one item at a time).
#[cfg(target_os = "macos")]
fn items_of_the_service() -> Vec<String> {
    let found = Command::new("security")
        .args(["find-generic-password", "-s", SERVICE, "-a", "index"])
        .output()
        .unwrap()
        .status
        .success();
    if found {
        vec!["index".to_owned()]
    } else {
        Vec::new()
    }
}

#[test]
fn a_sign_in_in_the_native_keychain_is_kept_read_again_and_deleted() {
    let opened = open(TokenStoreChoice::Keychain, None, &env).unwrap();
    assert_eq!(
        opened.line.to_string(),
        "the tokens are in the keychain of the host (service \"mcp-bridge-rs/mcp-bridge-vscode\")"
    );
    assert_eq!(opened.store.kind(), StoreKind::Keychain);
    // Whatever an earlier run left.
    opened.store.delete_all().unwrap();

    let key = entry("https://127.0.0.1:9/mcp");
    opened.store.save(&key, &large_sign_in("access-1")).unwrap();
    opened.store.save(&key, &large_sign_in("access-2")).unwrap();
    assert_eq!(opened.store.keys().unwrap(), vec![key.clone()]);

    // A new store reads what the first one saved.
    let again = open(TokenStoreChoice::Auto, None, &env).unwrap();
    assert_eq!(
        again.store.load(&key).unwrap(),
        Some(large_sign_in("access-2"))
    );

    let items = items_of_the_service();
    if cfg!(windows) {
        // The index, the entry and its parts, each a credential of the service.
        assert!(items.len() >= 4, "{items:?}");
        assert!(
            items
                .iter()
                .any(|item| item.ends_with(&format!("{SERVICE}/index"))),
            "{items:?}"
        );
        // The executable, another process, deletes them (macOS would ask the user
        // whether another program may use the items of the test).
        let (code, stderr) = logout(&["--token-store", "keychain", "--all"]);
        assert_eq!(code, Some(0), "{stderr}");
        assert_eq!(
            stderr,
            "mcp-bridge-vscode: vscode: info: logout --all deleted 1 stored sign-ins in the keychain of the host\n"
        );
    } else {
        assert_eq!(items, ["index"]);
        assert_eq!(again.store.delete_all(), Ok(1));
    }
    assert_eq!(items_of_the_service(), Vec::<String>::new());
    assert_eq!(again.store.load(&key).unwrap(), None);
    assert_eq!(again.store.keys().unwrap(), Vec::<EntryKey>::new());
}
