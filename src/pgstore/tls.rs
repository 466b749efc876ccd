//! TLS to PostgreSQL with libpq's `sslmode` meanings (rustls with ring, through
//! tokio-postgres-rustls):
//!
//! | `sslmode` | encrypted | certificate checked |
//! | --- | --- | --- |
//! | `disable` | never | — |
//! | `allow`, `prefer` (default) | when the server offers TLS | no |
//! | `require` | always | no (as `verify-ca` when `sslrootcert` is given, like libpq) |
//! | `verify-ca` | always | chain to a trusted root |
//! | `verify-full` | always | chain and host name |
//!
//! Trusted roots: the PEM file `sslrootcert=PATH`, or the system's (`sslrootcert=system`,
//! and the default). Handshake signatures are always verified. Client certificates
//! (`sslcert`, `sslkey`) are refused with a clear error.

use crate::error::{Error, Result};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use std::path::PathBuf;
use std::sync::Arc;
use tokio_postgres::config::SslMode;
use tokio_postgres_rustls::MakeRustlsConnect;

/// What a connection asks of TLS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsPolicy {
    pub check: Check,
    /// `sslrootcert`: a PEM file of trusted roots; `None`: the system's.
    pub roots: Option<PathBuf>,
}

/// How much of the server's certificate is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// Nothing (`disable`, `allow`, `prefer`, `require` without `sslrootcert`).
    None,
    /// The chain to a trusted root (`verify-ca`, `require` with `sslrootcert`).
    Chain,
    /// The chain and the host name (`verify-full`).
    ChainAndHost,
}

impl TlsPolicy {
    /// The policy and the driver's mode for libpq's `sslmode` value (`None`: not given)
    /// and `sslrootcert` value.
    ///
    /// # Errors
    /// A message for an unknown mode.
    pub fn from_params(
        mode: Option<&str>,
        rootcert: Option<&str>,
    ) -> std::result::Result<(TlsPolicy, SslMode), String> {
        let roots = rootcert
            .filter(|r| !r.is_empty() && *r != "system")
            .map(PathBuf::from);
        let (check, driver) = match mode.unwrap_or("prefer") {
            "disable" => (Check::None, SslMode::Disable),
            "allow" | "prefer" => (Check::None, SslMode::Prefer),
            "require" if rootcert.is_some() => (Check::Chain, SslMode::Require),
            "require" => (Check::None, SslMode::Require),
            "verify-ca" => (Check::Chain, SslMode::Require),
            "verify-full" => (Check::ChainAndHost, SslMode::Require),
            other => {
                return Err(format!(
                    "sslmode `{other}` is not one of disable, allow, prefer, require, verify-ca, verify-full"
                ))
            }
        };
        Ok((TlsPolicy { check, roots }, driver))
    }
}

/// The connector for `policy`.
///
/// # Errors
/// [`Error::Database`] when the roots cannot be read or hold no certificate.
pub fn connector(policy: &TlsPolicy) -> Result<MakeRustlsConnect> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Database(format!("TLS setup failed: {e}")))?;
    let verifier: Arc<dyn ServerCertVerifier> = match policy.check {
        Check::None => Arc::new(NoCertificateCheck(provider)),
        check => {
            let roots = Arc::new(roots(policy)?);
            let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider)
                .build()
                .map_err(|e| Error::Database(format!("TLS setup failed: {e}")))?;
            match check {
                Check::ChainAndHost => webpki,
                _ => Arc::new(NoHostCheck(webpki)),
            }
        }
    };
    let config = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

/// The trusted roots: the `sslrootcert` PEM file, else the system's.
fn roots(policy: &TlsPolicy) -> Result<RootCertStore> {
    let mut store = RootCertStore::empty();
    match &policy.roots {
        Some(path) => {
            let certs = CertificateDer::pem_file_iter(path)
                .and_then(|it| it.collect::<std::result::Result<Vec<_>, _>>())
                .map_err(|e| {
                    Error::Database(format!(
                        "cannot read the TLS roots `sslrootcert={}`: {e}\nhint: give a PEM file of the certificate authority that signed the server's certificate",
                        path.display()
                    ))
                })?;
            for c in certs {
                store.add(c).map_err(|e| {
                    Error::Database(format!(
                        "`sslrootcert={}` holds a certificate rustls refuses: {e}",
                        path.display()
                    ))
                })?;
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            store.add_parsable_certificates(found.certs);
        }
    }
    if store.is_empty() {
        return Err(Error::Database(
            "no trusted TLS roots: the sslrootcert file or the system's store holds no certificate\nhint: set `sslrootcert=PATH` to the server's certificate authority (PEM)".into(),
        ));
    }
    Ok(store)
}

/// `allow`/`prefer`/`require`: encrypted, the certificate taken as it is (libpq's
/// meaning); the handshake's signatures are still verified.
#[derive(Debug)]
struct NoCertificateCheck(Arc<CryptoProvider>);

impl ServerCertVerifier for NoCertificateCheck {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain checked, the host name not.
#[derive(Debug)]
struct NoHostCheck(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for NoHostCheck {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sslmode_values_mean_what_libpq_says() {
        let p = |m: Option<&str>, r: Option<&str>| TlsPolicy::from_params(m, r).unwrap();
        assert_eq!(p(None, None).0.check, Check::None);
        assert_eq!(p(None, None).1, SslMode::Prefer);
        assert_eq!(p(Some("disable"), None).1, SslMode::Disable);
        assert_eq!(p(Some("require"), None).0.check, Check::None);
        assert_eq!(p(Some("require"), None).1, SslMode::Require);
        assert_eq!(p(Some("require"), Some("/ca.pem")).0.check, Check::Chain);
        assert_eq!(p(Some("verify-ca"), None).0.check, Check::Chain);
        let full = p(Some("verify-full"), Some("/ca.pem")).0;
        assert_eq!(full.check, Check::ChainAndHost);
        assert_eq!(full.roots, Some(PathBuf::from("/ca.pem")));
        assert_eq!(p(Some("verify-full"), Some("system")).0.roots, None);
        assert!(TlsPolicy::from_params(Some("verify_full"), None)
            .unwrap_err()
            .contains("verify-full"));
    }

    #[test]
    fn a_roots_file_without_certificates_is_a_clear_error() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("empty.pem");
        std::fs::write(&f, "not a certificate\n").unwrap();
        let policy = TlsPolicy {
            check: Check::Chain,
            roots: Some(f),
        };
        let e = connector(&policy).err().unwrap().to_string();
        assert!(e.contains("no trusted TLS roots"), "{e}");
        let missing = TlsPolicy {
            check: Check::ChainAndHost,
            roots: Some(t.path().join("missing.pem")),
        };
        let e = connector(&missing).err().unwrap().to_string();
        assert!(e.contains("cannot read the TLS roots"), "{e}");
    }
}
