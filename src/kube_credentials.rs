//! A kubeconfig's credentials handled as kubectl (client-go) handles them: the in-tree auth
//! providers kubectl no longer has are refused before anything runs (kube-rs would run a `gcp`
//! provider's `cmd-path`), and errors are told without the secrets they carry: a failing exec
//! credential plugin is named with its exit code only (not its arguments, environment or output,
//! which kube-rs's own message prints), and a kubeconfig that does not parse is located by line
//! and column, without the snippet of the file.

use std::error::Error;

use kube::client::AuthError;
use kube::config::{AuthInfo, KubeconfigError};

/// The auth provider kubectl still builds in; it reads tokens from the kubeconfig and runs
/// nothing.
const OIDC: &str = "oidc";

/// kubectl's error for `user.auth-provider` when it would not use it, `None` when it would (none,
/// or `oidc`).
pub fn removed_auth_provider(user: &AuthInfo) -> Option<String> {
    let name = user.auth_provider.as_ref()?.name.as_str();
    Some(match name {
        OIDC => return None,
        "gcp" => "The gcp auth plugin has been removed.\nPlease use the \"gke-gcloud-auth-plugin\" \
                  kubectl/client-go credential plugin instead.\nSee \
                  https://cloud.google.com/blog/products/containers-kubernetes/kubectl-auth-changes-in-gke \
                  for further details"
            .to_owned(),
        "azure" => "The azure auth plugin has been removed.\nPlease use the \
                    https://github.com/Azure/kubelogin kubectl/client-go credential plugin instead.\n\
                    See https://github.com/Azure/kubelogin for further details"
            .to_owned(),
        other => format!("no Auth Provider found for name {other:?}"),
    })
}

/// A kube client for `config`, refusing a removed auth provider first (nothing runs), its
/// errors told without secrets.
pub fn client(config: kube::Config) -> Result<kube::Client, String> {
    if let Some(refusal) = removed_auth_provider(&config.auth_info) {
        return Err(refusal);
    }
    let program = config
        .auth_info
        .exec
        .as_ref()
        .and_then(|exec| exec.command.clone());
    kube::Client::try_from(config).map_err(|err| told(&err, program.as_deref()).join(": "))
}

/// `err` and its causes on one line (`outer: inner`), each cause that carries credentials told
/// as client-go tells it, the causes below it left out.
pub fn redacted(err: &(dyn Error + 'static)) -> String {
    redacted_messages(err).join(": ")
}

/// The messages of `err` and its causes, outermost first, as [`redacted`] tells them: a cause
/// that carries credentials is replaced (in the messages above it too, which often repeat it)
/// and ends the list.
pub fn redacted_messages(err: &(dyn Error + 'static)) -> Vec<String> {
    told(err, None)
}

/// [`redacted_messages`], naming a failing exec plugin `program` when it is known.
fn told(err: &(dyn Error + 'static), program: Option<&str>) -> Vec<String> {
    let mut messages: Vec<String> = Vec::new();
    let mut cause = Some(err);
    while let Some(current) = cause {
        if let Some(safe) = safe_text(current, program) {
            let leaky = current.to_string();
            for message in &mut messages {
                *message = message.replace(&leaky, &safe);
            }
            if !messages.iter().any(|message| message.contains(&safe)) {
                messages.push(safe);
            }
            break;
        }
        messages.push(current.to_string());
        cause = current.source();
    }
    messages
}

/// The text client-go gives for an error that would print credentials, `None` for any other.
fn safe_text(err: &(dyn Error + 'static), program: Option<&str>) -> Option<String> {
    if let Some(auth) = err.downcast_ref::<AuthError>() {
        return auth_text(auth, program);
    }
    match err.downcast_ref::<KubeconfigError>()? {
        KubeconfigError::Parse(parse) => Some(match parse.location() {
            Some(at) => format!(
                "the kubeconfig does not parse at line {}, column {} (its text is not shown: it may hold credentials)",
                at.line(),
                at.column()
            ),
            None => "the kubeconfig does not parse (its text is not shown: it may hold credentials)".to_owned(),
        }),
        _ => None,
    }
}

fn auth_text(err: &AuthError, program: Option<&str>) -> Option<String> {
    let named = |cmd: Option<&str>| {
        program
            .map(str::to_owned)
            .or_else(|| cmd.and_then(program_of))
            .map_or_else(|| "executable".to_owned(), |p| format!("executable {p}"))
    };
    Some(match err {
        AuthError::AuthExecRun { cmd, out } => {
            let program = named(Some(cmd));
            match out.status.code() {
                Some(code) => format!("getting credentials: exec: {program} failed with exit code {code}"),
                None => format!("getting credentials: exec: {program} was killed by a signal"),
            }
        }
        AuthError::AuthExecStart(io) if io.kind() == std::io::ErrorKind::NotFound => {
            format!("getting credentials: exec: {} not found", named(None))
        }
        AuthError::AuthExecStart(io) => format!("getting credentials: exec: {}", io.kind()),
        AuthError::AuthExecParse(_) => {
            "getting credentials: decoding stdout: the credential plugin's output is not an \
             ExecCredential (not shown: it may hold credentials)"
                .to_owned()
        }
        _ => return None,
    })
}

/// The program of a command as `std::process::Command`'s `Debug` writes it
/// (`[cd "dir" && ][env ...][KEY="value" ...]["program"] "arg0" "arg1"...`): the first quoted
/// word, which is the program (`["program"]`) or the name it was run by (`arg0`).
fn program_of(debug: &str) -> Option<String> {
    let start = debug
        .split(' ')
        .scan(0usize, |offset, word| {
            let at = *offset;
            *offset += word.len() + 1;
            Some((at, word))
        })
        .find(|(_, word)| word.starts_with('"') || word.starts_with("[\""))
        .map(|(at, word)| at + usize::from(word.starts_with('[')))?;
    if debug.get(..start)?.starts_with("cd ") {
        return None;
    }
    let quoted = debug.get(start..)?;
    // A Rust string literal, as `Debug` escapes it: ends at the first unescaped quote.
    let mut escaped = false;
    for (index, c) in quoted.char_indices().skip(1) {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => return serde_json::from_str::<String>(&quoted[..=index]).ok(),
            _ => escaped = false,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_is_read_from_a_commands_debug_text_without_its_environment() {
        let mut command = std::process::Command::new("/usr/bin/token-plugin");
        command.env("API_KEY", "s3cr3t").args(["--token=abc", "x y"]);
        let debug = format!("{command:?}");
        assert!(debug.contains("s3cr3t"), "the text kube-rs prints: {debug}");
        assert_eq!(program_of(&debug).as_deref(), Some("/usr/bin/token-plugin"));
        assert_eq!(program_of(r#""plain""#).as_deref(), Some("plain"));
        assert_eq!(program_of("no quotes at all"), None);
    }

    #[test]
    fn removed_providers_are_refused_in_kubectls_words() {
        let user = |name: &str| AuthInfo {
            auth_provider: Some(kube::config::AuthProviderConfig {
                name: name.to_owned(),
                ..Default::default()
            }),
            ..Default::default()
        };
        let gcp = removed_auth_provider(&user("gcp")).unwrap_or_default();
        assert!(gcp.starts_with("The gcp auth plugin has been removed."), "{gcp}");
        assert!(removed_auth_provider(&user("azure"))
            .is_some_and(|m| m.contains("https://github.com/Azure/kubelogin")));
        assert_eq!(
            removed_auth_provider(&user("x")).as_deref(),
            Some("no Auth Provider found for name \"x\"")
        );
        assert_eq!(removed_auth_provider(&user("oidc")), None);
        assert_eq!(removed_auth_provider(&AuthInfo::default()), None);
    }
}
