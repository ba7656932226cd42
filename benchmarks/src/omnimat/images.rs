//! The images of multimodal items: which stems an item names, which stems are safe to look
//! up, what a file is by its first bytes, and the limits. Pure: the server reads the files
//! (`[suites] omnimat_images_dir`, `atomworld run --images DIR`) and fills the item's
//! `images` (or `images_unavailable`) before it is prepared; [`crate::omnimat::prompt`]
//! attaches them to the question.
//!
//! An item whose images cannot all be had is never sent text-only: it is "images
//! unavailable", asked of no model and left out of the scores (like MatTools' "data
//! unavailable").

use crate::task::Image;

/// The largest image file read (bytes): 5 MiB, Anthropic's limit per image.
pub const MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024;

/// The most image bytes one item may carry in all: 20 MiB (about 27 MiB once in base64,
/// below the providers' request limits).
pub const MAX_ITEM_IMAGE_BYTES: u64 = 20 * 1024 * 1024;

/// The file name extensions a stem is looked up with, in this order.
pub const EXTENSIONS: [&str; 5] = ["png", "jpg", "jpeg", "gif", "webp"];

/// The group and table label of an item whose images are unavailable.
pub const IMAGES_UNAVAILABLE: &str = "images unavailable";

/// The image stems an `image_url` field names (comma-separated, trimmed, empty ones
/// dropped), in order.
pub fn stems(image_url: Option<&str>) -> Vec<&str> {
    image_url
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// Whether `stem` may be joined to a directory: a plain file name stem of ASCII letters,
/// digits, `_`, `-`, `.` and spaces, not starting with a dot, at most 200 bytes. No
/// separators, so `../x`, `/etc/x` and `C:\x` are refused.
pub fn safe_stem(stem: &str) -> bool {
    !stem.is_empty()
        && stem.len() <= 200
        && !stem.starts_with('.')
        && stem
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ' '))
}

/// The media type of an image file by its magic bytes (PNG, JPEG, GIF, WebP), whatever its
/// name says; `None` for anything else.
pub fn sniff_media_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// An image from a file's bytes, its media type from the bytes: `Err` says why it is not
/// one (too large, or not PNG, JPEG, GIF or WebP).
pub fn image_of(bytes: &[u8]) -> Result<Image, String> {
    if bytes.len() as u64 > MAX_IMAGE_BYTES {
        return Err(format!(
            "{} bytes, more than the {} MiB allowed per image",
            bytes.len(),
            MAX_IMAGE_BYTES / (1024 * 1024)
        ));
    }
    let media_type =
        sniff_media_type(bytes).ok_or_else(|| "not a PNG, JPEG, GIF or WebP image".to_string())?;
    Ok(Image::from_bytes(media_type, bytes))
}

/// What the item's images come to: the images to attach (none for a text-only item), or why
/// they are unavailable. `loaded` and `unavailable` are what the server filled in; an item
/// that names stems but was given neither (no images directory, or scored where no files
/// are read) is unavailable too.
pub fn resolve<'a>(
    stems: &[&str],
    loaded: &'a [Image],
    unavailable: Option<&str>,
) -> Result<&'a [Image], String> {
    if stems.is_empty() {
        return Ok(&[]);
    }
    if let Some(why) = unavailable {
        return Err(why.to_string());
    }
    if loaded.len() == stems.len() {
        return Ok(loaded);
    }
    Err(format!(
        "{IMAGES_UNAVAILABLE} ({} not loaded: no images directory is configured)",
        stems.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_in_order() {
        assert_eq!(
            stems(Some("19_QA_017_img1, 19_QA_017_img2,")),
            ["19_QA_017_img1", "19_QA_017_img2"]
        );
        assert!(stems(None).is_empty());
        assert!(stems(Some(" ")).is_empty());
    }

    #[test]
    fn unsafe_stems_are_refused() {
        assert!(safe_stem("04_Cal_007_img"));
        for bad in [
            "",
            "../x",
            "..",
            "/etc/passwd",
            "a/b",
            "a\\b",
            ".hidden",
            "C:x",
            "a\0b",
        ] {
            assert!(!safe_stem(bad), "{bad:?}");
        }
    }

    #[test]
    fn media_type_from_the_bytes() {
        assert_eq!(
            sniff_media_type(b"\x89PNG\r\n\x1a\nrest"),
            Some("image/png")
        );
        assert_eq!(
            sniff_media_type(&[0xFF, 0xD8, 0xFF, 0xE0]),
            Some("image/jpeg")
        );
        assert_eq!(sniff_media_type(b"GIF89a..."), Some("image/gif"));
        assert_eq!(
            sniff_media_type(b"RIFF\0\0\0\0WEBPVP8 "),
            Some("image/webp")
        );
        assert_eq!(sniff_media_type(b"<svg"), None);
        assert!(image_of(b"<html>").is_err());
        let big = vec![0u8; MAX_IMAGE_BYTES as usize + 1];
        assert!(image_of(&big).unwrap_err().contains("5 MiB"));
    }

    #[test]
    fn an_item_with_stems_needs_every_image() {
        let img = image_of(b"GIF89a").unwrap();
        assert_eq!(img.media_type, "image/gif");
        let loaded = vec![img];
        assert_eq!(resolve(&[], &[], None), Ok(&[][..]));
        assert_eq!(resolve(&["a"], &loaded, None), Ok(&loaded[..]));
        assert!(resolve(&["a", "b"], &loaded, None)
            .unwrap_err()
            .starts_with("images unavailable (a, b not loaded"));
        assert_eq!(
            resolve(
                &["a"],
                &loaded,
                Some("images unavailable (stem a not found in D)")
            ),
            Err("images unavailable (stem a not found in D)".to_string())
        );
    }
}
