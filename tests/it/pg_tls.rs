//! TLS to PostgreSQL (`sslmode`, `sslrootcert`) against a TLS-terminating relay in front
//! of the test server (the PyPI PostgreSQL is built without SSL): the relay answers the
//! client's SSLRequest, completes the TLS handshake with a throwaway certificate and
//! forwards the decrypted stream to the server, counting TLS and plain sessions.
//!
//! Needs `DOCFUSE_TEST_DATABASE_URL` like tests/pg.rs.

use crate::common;
use common::*;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A throwaway authority: its PEM, and a server certificate it signs for `names`.
struct Authority {
    pem: String,
    issuer: rcgen::Issuer<'static, rcgen::KeyPair>,
}

impl Authority {
    fn new(name: &str) -> Authority {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::CrlSign,
        ];
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        Authority {
            pem: cert.pem(),
            issuer: rcgen::Issuer::new(params, key),
        }
    }

    /// A rustls server configuration with a certificate for `names` signed by this.
    fn server(&self, names: &[&str]) -> Arc<rustls::ServerConfig> {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let params = rcgen::CertificateParams::new(names).unwrap();
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        let chain: Vec<CertificateDer<'static>> = vec![cert.der().clone()];
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        Arc::new(
            rustls::ServerConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_no_client_auth()
                .with_single_cert(chain, key)
                .unwrap(),
        )
    }

    fn write(&self, path: &Path) -> String {
        std::fs::write(path, &self.pem).unwrap();
        path.to_str().unwrap().to_string()
    }
}

/// PostgreSQL's SSLRequest: length 8, code 80877103.
const SSL_REQUEST: [u8; 8] = [0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f];

/// Relays 127.0.0.1:`port` to the test server, terminating TLS with `config`.
struct TlsRelay {
    port: u16,
    tls: Arc<AtomicUsize>,
    plain: Arc<AtomicUsize>,
    _rt: tokio::runtime::Runtime,
}

impl TlsRelay {
    fn start(to: &str, config: Arc<rustls::ServerConfig>) -> TlsRelay {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let listener = rt
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let port = listener.local_addr().unwrap().port();
        let (tls, plain) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (t, p, to) = (tls.clone(), plain.clone(), to.to_string());
        let acceptor = tokio_rustls::TlsAcceptor::from(config);
        rt.spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let (t, p, to, acceptor) = (t.clone(), p.clone(), to.clone(), acceptor.clone());
                tokio::spawn(async move {
                    let _ = relay(client, &to, acceptor, &t, &p).await;
                });
            }
        });
        TlsRelay {
            port,
            tls,
            plain,
            _rt: rt,
        }
    }

    fn sessions(&self) -> (usize, usize) {
        (
            self.tls.load(Ordering::SeqCst),
            self.plain.load(Ordering::SeqCst),
        )
    }
}

async fn relay(
    mut client: tokio::net::TcpStream,
    to: &str,
    acceptor: tokio_rustls::TlsAcceptor,
    tls: &AtomicUsize,
    plain: &AtomicUsize,
) -> std::io::Result<()> {
    let mut head = [0u8; 8];
    client.read_exact(&mut head).await?;
    let mut server = tokio::net::TcpStream::connect(to).await?;
    if head == SSL_REQUEST {
        client.write_all(b"S").await?;
        let mut stream = acceptor.accept(client).await?;
        tls.fetch_add(1, Ordering::SeqCst);
        tokio::io::copy_bidirectional(&mut stream, &mut server).await?;
    } else {
        plain.fetch_add(1, Ordering::SeqCst);
        server.write_all(&head).await?;
        tokio::io::copy_bidirectional(&mut client, &mut server).await?;
    }
    Ok(())
}

/// `postgres://USER@127.0.0.1:PORT/DB?PARAMS` for the relay on `port`.
fn through(url: &str, port: u16, params: &str) -> String {
    let (head, tail) = url.split_once('@').unwrap();
    let (_, db) = tail.split_once('/').unwrap();
    let db = db.split('?').next().unwrap();
    format!("{head}@127.0.0.1:{port}/{db}?{params}")
}

/// Connects to `url` and runs one query; the error's text when that fails.
fn try_connect(url: &str) -> Result<(), String> {
    let loc = docfuse::pgstore::PgLocation::parse(url).map_err(|e| e.to_string())?;
    docfuse::pgstore::block_on(async {
        let c = docfuse::pgstore::connect(&loc).await?;
        c.simple_query("SELECT 1")
            .await
            .map_err(|e| docfuse::Error::Database(e.to_string()))?;
        Ok(())
    })
    .map_err(|e| e.to_string())
}

fn hostport(url: &str) -> String {
    let tail = url.split_once('@').unwrap().1;
    tail.split_once('/').unwrap().0.to_string()
}

#[test]
fn sslmode_means_what_libpq_says() {
    let Some(url) = database() else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let ca = Authority::new("docfuse test CA");
    let other = Authority::new("someone else's CA");
    let ca_file = ca.write(&t.path().join("ca.pem"));
    let other_file = other.write(&t.path().join("other.pem"));
    // a certificate for another name than the one connected to
    let named = TlsRelay::start(&hostport(&url), ca.server(&["db.example"]));
    let connect = |params: &str| try_connect(&through(&url, named.port, params));

    // encrypted without a certificate check (require, prefer: the default)
    connect("sslmode=require").unwrap();
    connect("").unwrap();
    assert_eq!(named.sessions(), (2, 0));
    // disable: plain
    connect("sslmode=disable").unwrap();
    assert_eq!(named.sessions(), (2, 1));
    // the chain checked, the name not
    connect(&format!("sslmode=verify-ca&sslrootcert={ca_file}")).unwrap();
    connect(&format!("sslmode=require&sslrootcert={ca_file}")).unwrap();
    // verify-full: the name must match
    let e = connect(&format!("sslmode=verify-full&sslrootcert={ca_file}")).unwrap_err();
    assert!(
        e.contains("cannot verify the TLS connection") && e.contains("not valid for name"),
        "{e}"
    );
    // another authority: refused by verify-ca and by require with that root
    for mode in ["verify-ca", "require"] {
        let e = connect(&format!("sslmode={mode}&sslrootcert={other_file}")).unwrap_err();
        assert!(
            e.contains("UnknownIssuer") && e.contains("sslrootcert=PATH"),
            "{mode}: {e}"
        );
    }
    assert_eq!(
        named.sessions(),
        (4, 1),
        "refused handshakes are not sessions"
    );
    // a server without TLS (the test server itself): prefer connects plain, require
    // and verify-full refuse to
    let plain = |params: &str| {
        try_connect(&through(
            &url,
            hostport(&url).rsplit(':').next().unwrap().parse().unwrap(),
            params,
        ))
    };
    plain("sslmode=prefer").unwrap();
    for mode in ["require", "verify-full"] {
        let e = plain(&format!("sslmode={mode}")).unwrap_err();
        assert!(e.contains("does not offer TLS"), "{mode}: {e}");
    }
    // a bad mode and client certificates are clear errors before any connection
    let e = connect("sslmode=verify_full").unwrap_err();
    assert!(e.contains("verify-full"), "{e}");
    let e = connect("sslcert=/x.pem").unwrap_err();
    assert!(e.contains("client certificates"), "{e}");
    assert_eq!(named.sessions(), (4, 1));
}

#[test]
fn an_index_written_and_searched_over_verified_tls() {
    let Some(url) = database() else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let ca = Authority::new("docfuse test CA");
    let ca_file = ca.write(&t.path().join("ca.pem"));
    let relay = TlsRelay::start(&hostport(&url), ca.server(&["127.0.0.1", "localhost"]));
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let db = through(
        &url,
        relay.port,
        &format!(
            "sslmode=verify-full&sslrootcert={ca_file}&schema=tls_{}_{nanos}",
            std::process::id()
        ),
    );
    let cache = t.path().join("cache");
    let env = [("DOCFUSE_PG_CACHE", cache.to_str().unwrap())];
    let docs = sample_docs();
    let o = docfuse_env(
        t.path(),
        &["index", "--index", &db, docs.to_str().unwrap()],
        &env,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = docfuse_env(
        t.path(),
        &[
            "search",
            "--index",
            &db,
            "--json",
            "--mode",
            "hybrid",
            "define a task",
        ],
        &env,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["mode"], "hybrid", "{v}");
    assert!(!v["results"].as_array().unwrap().is_empty(), "{v}");
    let (tls, plain) = relay.sessions();
    assert!(tls >= 3 && plain == 0, "tls {tls}, plain {plain}");
}
