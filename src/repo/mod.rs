//! What a repository says about itself beside its code and documentation: package
//! manifests (`package.json`, `Cargo.toml`, `pyproject.toml`, `go.mod`) with the checks
//! that apply to each package, and ownership records (`CODEOWNERS`, GitHub and GitLab
//! syntax). Pure readers of one file's text each; walking the repository and linking
//! packages to modules is the caller's. The project file (`docfuse.toml`) declares
//! ownership records and intent and change routes.
//!
//! Must not import anything of docfuse but `error`: it sits in the ingest layer beside
//! `code` and `chunk`.

mod owners;
mod package;
mod project;

pub use owners::{read_codeowners, OwnerRule, Owners};
pub use package::{
    is_manifest_name, read_package, Check, ChecksSource, Manager, Package, MANIFEST_NAMES,
};
pub use project::{read_project, OwnershipRecord, Project, Route, PROJECT_FILE};

#[cfg(test)]
mod tests;
