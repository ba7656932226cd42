//! Structure files in and out of the page: reading pasted or dropped text in any format the
//! engine knows (CIF, POSCAR, extended XYZ, pymatgen JSON) and downloading a shown structure
//! in each of them.

use engine::format::{read_structure, write_structure, Format, FormatError};
use engine::Structure;
use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// Reads a structure from text, guessing its format from the file name (if any) and the text.
/// Text that shows no format (prose, a formula) is still tried as a POSCAR, but when that
/// fails the error says which formats are read rather than what a POSCAR misses.
pub fn read_any(file_name: Option<&str>, text: &str) -> Result<(Structure, Format), String> {
    let sniffed = Format::sniff(file_name, text);
    let format = sniffed.unwrap_or(Format::Poscar);
    let s = read_structure(format, text).map_err(|e| match sniffed {
        Some(_) => e.to_string(),
        None => format!(
            "This is not a structure file the page reads: paste or drop a CIF, a POSCAR or \
             CONTCAR, an extended XYZ or a pymatgen Structure JSON. (Read as a POSCAR: {e}.)"
        ),
    })?;
    if s.is_empty() {
        return Err(FormatError {
            format,
            message: "the file has no atom sites".into(),
            pos: None,
        }
        .to_string());
    }
    Ok((s, format))
}

/// The text of the first file of a drop event, with its name.
pub async fn dropped_file(event: &ev::DragEvent) -> Option<(String, String)> {
    let file = event.data_transfer()?.files()?.get(0)?;
    let name = file.name();
    let text = wasm_bindgen_futures::JsFuture::from(file.text())
        .await
        .ok()?;
    Some((name, text.as_string()?))
}

/// Download links for a structure in every format (`<a download>` whose `href` is filled in
/// with a data URL at click time, so nothing is serialised until asked for).
#[component]
pub fn ExportLinks(
    /// The structure to export (the links are hidden while `None`).
    #[prop(into)]
    structure: Signal<Option<Structure>>,
    /// Which structure this is (`input`, `target`): the `data-for` of the links.
    role: &'static str,
    /// File name stem of the downloads (`input`, or a dropped file's name).
    #[prop(into)]
    stem: Signal<String>,
) -> impl IntoView {
    let links = move || {
        structure.get().map(|_| {
            Format::ALL
                .into_iter()
                .map(|format| {
                    let name = format.file_name(&stem.get());
                    let on_click = move |e: ev::MouseEvent| {
                        let Some(s) = structure.get_untracked() else { return };
                        let text = write_structure(format, &s);
                        let url = format!(
                            "data:text/plain;charset=utf-8,{}",
                            String::from(js_sys::encode_uri_component(&text))
                        );
                        if let Some(a) = e
                            .current_target()
                            .and_then(|t| t.dyn_into::<web_sys::HtmlAnchorElement>().ok())
                        {
                            a.set_href(&url);
                        }
                    };
                    view! {
                        <a class="export" href="#" download=name.clone() data-format=format.name() on:click=on_click>
                            {format.name()}
                        </a>
                    }
                })
                .collect_view()
        })
    };
    view! { <span class="exports" data-for=role>"Download: " {links}</span> }
}
