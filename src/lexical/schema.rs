//! The tantivy schema: one indexed text field per BM25F field, raw exact-key fields,
//! the chunk's bucket and its position in it (fast fields: with the bucket list they give
//! the ordinal, the stable tie-break key), the position of its section's first piece (a
//! fast field: the section it belongs to) and one stored JSON blob.

use crate::config::{Field as DocField, PerField};
use tantivy::schema::{
    Field, IndexRecordOption, NumericOptions, Schema, TextFieldIndexing, TextOptions, STORED,
};
use tantivy::tokenizer::{TextAnalyzer, WhitespaceTokenizer};
use tantivy::Index;

/// Name of the tokenizer the text fields use: texts are analysed by docfuse first and
/// handed to tantivy as space-separated terms.
pub(crate) const TOKENIZER: &str = "docfuse_terms";

/// Handles to the schema's fields.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fields {
    pub text: PerField<Field>,
    pub id_key: Field,
    pub path_key: Field,
    pub symbol_key: Field,
    /// The chunk's position in its bucket.
    pub ord: Field,
    /// The chunk's bucket id (indexed: a refresh deletes a bucket by it).
    pub bucket: Field,
    /// The position in the bucket of the first piece of the chunk's section (a section's
    /// pieces share it: whole-section statistics for section evidence).
    pub section: Field,
    pub stored: Field,
}

pub(crate) fn build_schema() -> (Schema, Fields) {
    let mut sb = Schema::builder();
    let indexing = TextFieldIndexing::default()
        .set_tokenizer(TOKENIZER)
        .set_index_option(IndexRecordOption::WithFreqs)
        .set_fieldnorms(true);
    let text_opts = TextOptions::default().set_indexing_options(indexing);
    let text =
        DocField::ALL.map(|f| sb.add_text_field(&format!("f_{}", f.name()), text_opts.clone()));
    let raw = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer("raw")
            .set_index_option(IndexRecordOption::Basic)
            .set_fieldnorms(false),
    );
    let fields = Fields {
        text,
        id_key: sb.add_text_field("x_id", raw.clone()),
        path_key: sb.add_text_field("x_path", raw.clone()),
        symbol_key: sb.add_text_field("x_symbol", raw),
        ord: sb.add_u64_field("ord", NumericOptions::default().set_fast()),
        bucket: sb.add_u64_field("bucket", NumericOptions::default().set_fast().set_indexed()),
        section: sb.add_u64_field("section", NumericOptions::default().set_fast()),
        stored: sb.add_text_field("chunk", STORED),
    };
    (sb.build(), fields)
}

/// Looks the fields up in an opened index's schema.
pub(crate) fn fields_of(schema: &Schema) -> tantivy::Result<Fields> {
    let get = |name: &str| schema.get_field(name);
    let mut text = Vec::with_capacity(crate::config::FIELDS);
    for f in DocField::ALL {
        text.push(get(&format!("f_{}", f.name()))?);
    }
    let text: PerField<Field> = text
        .try_into()
        .map_err(|_| tantivy::TantivyError::SchemaError("field count".into()))?;
    Ok(Fields {
        text,
        id_key: get("x_id")?,
        path_key: get("x_path")?,
        symbol_key: get("x_symbol")?,
        ord: get("ord")?,
        bucket: get("bucket")?,
        section: get("section")?,
        stored: get("chunk")?,
    })
}

pub(crate) fn register_tokenizer(index: &Index) {
    index.tokenizers().register(
        TOKENIZER,
        TextAnalyzer::from(WhitespaceTokenizer::default()),
    );
}
