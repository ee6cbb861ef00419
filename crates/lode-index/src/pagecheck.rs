//! A check on every page of the database: a VFS shim over SQLite's own
//! (unix) VFS that ends each page of an index database in a CRC-32 of the
//! rest, written as the page is written and verified as it is read, whether
//! through `pread` or the memory map. SQLite also reads the start of an
//! overflow page straight into a value, as many bytes as the value needs
//! there: such a read is not a whole page, holds no check and passes
//! unverified (lode's own blobs carry their checks).
//!
//! Why: the blobs lode decodes itself carry their own checks
//! ([`crate::checksum`]), but a flipped byte in a plain column (a line
//! number, a name) decodes to another value and would change an answer
//! without a word. With the page check such a page fails to read
//! (`SQLITE_IOERR_DATA`), the index counts as damaged and is rebuilt. This
//! is the design of SQLite's `cksumvfs` extension, implemented here over the
//! VFS API with CRC-32 (as `checksum`) in 4 reserved bytes a page.
//!
//! Only databases created with the reserve ([`reserve_on_create`]) are
//! checked: a page's reserve is read from the header, and a database without
//! it is served as SQLite would. The journal and the write-ahead log pass
//! through unchanged (the log's frames carry SQLite's own checksums). Unix
//! only; elsewhere [`vfs_name`] is `None` and pages are unchecked.

use std::ffi::{CStr, c_int, c_void};

use rusqlite::ffi;

/// Bytes reserved at the end of each page for its check.
pub(crate) const RESERVE: u8 = 4;

/// The VFS lode opens its databases with; `None` where it could not be set
/// up (then the default VFS serves, unchecked).
pub(crate) fn vfs_name() -> Option<&'static str> {
    #[cfg(unix)]
    {
        static REGISTERED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        // SAFETY: registration runs once, before any connection names the VFS.
        let ok = *REGISTERED.get_or_init(|| unsafe { register() });
        ok.then_some(NAME_STR)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Asks a new, empty database for the reserve its pages' checks need; must
/// run before the first write (the page size and reserve are fixed then).
pub(crate) fn reserve_on_create(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    let mut n: c_int = RESERVE as c_int;
    // SAFETY: `conn.handle()` is a live connection; the file control only
    // reads and writes `n`.
    let rc = unsafe {
        ffi::sqlite3_file_control(
            conn.handle(),
            c"main".as_ptr(),
            ffi::SQLITE_FCNTL_RESERVE_BYTES,
            (&raw mut n).cast::<c_void>(),
        )
    };
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(rusqlite::Error::SqliteFailure(ffi::Error::new(rc), None))
    }
}

const NAME_STR: &str = "lode-checked";
const NAME: &CStr = c"lode-checked";

/// Where in the header a database keeps its reserve per page.
const HEADER_RESERVE_AT: usize = 20;
const HEADER_LEN: usize = 100;
const MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Whether pages of a file are checked, and how large they are: not known
/// until its header is seen.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Checked {
    Unknown,
    /// Checked pages of this many bytes.
    Pages(i64),
    No,
}

/// The shim's file: SQLite's file struct (its methods), what the shim knows
/// of it, then the underlying VFS's own file, `szOsFile` bytes.
#[repr(C, align(8))]
struct CheckedFile {
    base: ffi::sqlite3_file,
    main_db: bool,
    checked: Checked,
}

/// The underlying VFS's file, which follows ours.
unsafe fn real(file: *mut ffi::sqlite3_file) -> *mut ffi::sqlite3_file {
    // SAFETY: our szOsFile is size_of::<CheckedFile>() plus the underlying one,
    // and CheckedFile's size is a multiple of its 8-byte alignment.
    unsafe {
        file.cast::<u8>()
            .add(std::mem::size_of::<CheckedFile>())
            .cast()
    }
}

unsafe fn shim(file: *mut ffi::sqlite3_file) -> &'static mut CheckedFile {
    // SAFETY: SQLite hands back the file our xOpen filled.
    unsafe { &mut *file.cast::<CheckedFile>() }
}

unsafe fn methods(file: *mut ffi::sqlite3_file) -> &'static ffi::sqlite3_io_methods {
    // SAFETY: called only after the underlying xOpen succeeded.
    unsafe { &*(*real(file)).pMethods }
}

/// The VFS the shim sits on, set once by [`register`].
static ORIG: std::sync::atomic::AtomicPtr<ffi::sqlite3_vfs> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());

fn orig() -> *mut ffi::sqlite3_vfs {
    ORIG.load(std::sync::atomic::Ordering::Acquire)
}

/// Registers the shim over the default VFS; whether it could.
#[cfg(unix)]
unsafe fn register() -> bool {
    // SAFETY: plain calls into SQLite; the structs are leaked for the
    // process's life, as SQLite keeps pointers to them.
    unsafe {
        if ffi::sqlite3_initialize() != ffi::SQLITE_OK {
            return false;
        }
        let base = ffi::sqlite3_vfs_find(std::ptr::null());
        if base.is_null() {
            return false;
        }
        ORIG.store(base, std::sync::atomic::Ordering::Release);
        // The unix VFS ignores its first argument everywhere but xOpen, so
        // every method but xOpen is the base's own.
        let mut vfs: ffi::sqlite3_vfs = *base;
        vfs.szOsFile = std::mem::size_of::<CheckedFile>() as c_int + (*base).szOsFile;
        vfs.pNext = std::ptr::null_mut();
        vfs.zName = NAME.as_ptr();
        vfs.pAppData = std::ptr::null_mut();
        vfs.xOpen = Some(x_open);
        let vfs = Box::leak(Box::new(vfs));
        ffi::sqlite3_vfs_register(vfs, 0) == ffi::SQLITE_OK
    }
}

unsafe extern "C" fn x_open(
    _vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    // SAFETY: `file` has room for CheckedFile and the underlying file.
    unsafe {
        let f = file.cast::<CheckedFile>();
        std::ptr::write(
            f,
            CheckedFile {
                base: ffi::sqlite3_file {
                    pMethods: std::ptr::null(),
                },
                main_db: flags & ffi::SQLITE_OPEN_MAIN_DB != 0,
                checked: Checked::Unknown,
            },
        );
        let base = orig();
        let Some(open) = (*base).xOpen else {
            return ffi::SQLITE_CANTOPEN;
        };
        let rc = open(base, name, real(file), flags, out_flags);
        if !(*real(file)).pMethods.is_null() {
            // On failure too: SQLite then calls xClose if pMethods is set.
            (*f).base.pMethods = &IO_METHODS;
        }
        rc
    }
}

/// What the check is, for a page of `n` bytes: CRC-32 of all but its last
/// [`RESERVE`] bytes.
fn page_sum(page: &[u8]) -> [u8; RESERVE as usize] {
    crc32fast::hash(&page[..page.len() - RESERVE as usize]).to_le_bytes()
}

/// Whether a read or write of `amt` bytes at `offset` is one whole checked
/// page of `file`. Not any power of two at a multiple of itself: SQLite
/// reads an overflow page's start directly for as many bytes as a value
/// needs there, 512 of a 4,096-byte page at times, and such a read holds no
/// check. Other sizes are turned away before the header is consulted.
unsafe fn is_checked_page(file: *mut ffi::sqlite3_file, amt: c_int, offset: i64) -> bool {
    let n = amt as i64;
    // SAFETY: `file` is open.
    valid_page_size(n) && unsafe { checked_page_size(file) } == Some(n) && offset % n == 0
}

/// A page size SQLite can have: a power of two from 512 to 65,536 bytes.
fn valid_page_size(n: i64) -> bool {
    (512..=65536).contains(&n) && n.count_ones() == 1
}

/// The size of this file's pages when they are checked, reading its header once.
unsafe fn checked_page_size(file: *mut ffi::sqlite3_file) -> Option<i64> {
    // SAFETY: `file` is open.
    unsafe {
        let f = shim(file);
        if !f.main_db {
            return None;
        }
        if f.checked == Checked::Unknown {
            let mut header = [0u8; HEADER_LEN];
            let read = methods(file).xRead?;
            let rc = read(
                real(file),
                header.as_mut_ptr().cast(),
                HEADER_LEN as c_int,
                0,
            );
            if rc == ffi::SQLITE_OK {
                f.checked = from_header(&header);
            }
            // A short read: an empty file, not known yet.
        }
        match f.checked {
            Checked::Pages(size) => Some(size),
            Checked::Unknown | Checked::No => None,
        }
    }
}

fn from_header(header: &[u8]) -> Checked {
    if header.len() < HEADER_LEN || header[..16] != MAGIC[..] {
        return Checked::Unknown;
    }
    let size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65_536,
        n => n as i64,
    };
    if header[HEADER_RESERVE_AT] == RESERVE && valid_page_size(size) {
        Checked::Pages(size)
    } else {
        Checked::No
    }
}

/// What a read or write at `offset` shows of the header: page 1 carries the
/// reserve, so reading or writing it says whether the file's pages are checked.
fn saw(f: &mut CheckedFile, offset: i64, bytes: &[u8]) {
    if f.main_db && offset == 0 {
        match from_header(bytes) {
            Checked::Unknown => {}
            known => f.checked = known,
        }
    }
}

unsafe extern "C" fn x_read(
    file: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amt: c_int,
    offset: ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: SQLite's buffer holds `amt` bytes.
    unsafe {
        let Some(read) = methods(file).xRead else {
            return IOERR;
        };
        let rc = read(real(file), buf, amt, offset);
        if rc != ffi::SQLITE_OK {
            return rc;
        }
        let bytes = std::slice::from_raw_parts(buf.cast::<u8>(), amt as usize);
        saw(shim(file), offset, bytes);
        if is_checked_page(file, amt, offset) && !page_ok(bytes) {
            return ffi::SQLITE_IOERR_DATA;
        }
        rc
    }
}

/// Writes the check of every page of the closed database at `path`, when
/// its header reserves room for them. A database written through the shim
/// before its first page reached the disk (`VACUUM INTO` spilling its cache
/// writes page 1 last) has pages the shim could not know to check; pages
/// already checked are rewritten unchanged.
pub(crate) fn seal(path: &std::path::Path) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom, Write};
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)?;
    let mut header = [0u8; HEADER_LEN];
    if file.read_exact(&mut header).is_err() {
        return Ok(());
    }
    let Checked::Pages(size) = from_header(&header) else {
        return Ok(());
    };
    let size = size as usize;
    file.seek(SeekFrom::Start(0))?;
    let mut page = vec![0u8; size];
    let mut offset = 0u64;
    loop {
        match file.read_exact(&mut page) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(e) => return Err(e),
        }
        if !page_ok(&page) {
            let sum = page_sum(&page);
            page[size - RESERVE as usize..].copy_from_slice(&sum);
            file.seek(SeekFrom::Start(offset))?;
            file.write_all(&page)?;
        }
        offset += size as u64;
        file.seek(SeekFrom::Start(offset))?;
    }
    file.sync_all()
}

/// Whether a page read back holds its check. A page of zeros is one SQLite
/// allocated and never wrote (a file grown by a later page's write).
fn page_ok(page: &[u8]) -> bool {
    let (body, sum) = page.split_at(page.len() - RESERVE as usize);
    sum == page_sum(page) || (sum == [0; RESERVE as usize] && body.iter().all(|&b| b == 0))
}

unsafe extern "C" fn x_write(
    file: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amt: c_int,
    offset: ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: SQLite's buffer holds `amt` bytes; the copy is ours.
    unsafe {
        let Some(write) = methods(file).xWrite else {
            return IOERR;
        };
        let bytes = std::slice::from_raw_parts(buf.cast::<u8>(), amt as usize);
        saw(shim(file), offset, bytes);
        if is_checked_page(file, amt, offset) {
            let mut page = bytes.to_vec();
            let sum = page_sum(&page);
            let n = page.len();
            page[n - RESERVE as usize..].copy_from_slice(&sum);
            return write(real(file), page.as_ptr().cast(), amt, offset);
        }
        write(real(file), buf, amt, offset)
    }
}

unsafe extern "C" fn x_fetch(
    file: *mut ffi::sqlite3_file,
    offset: ffi::sqlite3_int64,
    amt: c_int,
    pp: *mut *mut c_void,
) -> c_int {
    // SAFETY: a mapped page of `amt` bytes, when the underlying VFS gives one.
    unsafe {
        let Some(fetch) = methods(file).xFetch else {
            *pp = std::ptr::null_mut();
            return ffi::SQLITE_OK;
        };
        let rc = fetch(real(file), offset, amt, pp);
        if rc != ffi::SQLITE_OK || (*pp).is_null() {
            return rc;
        }
        if is_checked_page(file, amt, offset) {
            let page = std::slice::from_raw_parts((*pp).cast::<u8>(), amt as usize);
            if !page_ok(page) {
                if let Some(unfetch) = methods(file).xUnfetch {
                    unfetch(real(file), offset, *pp);
                }
                *pp = std::ptr::null_mut();
                return ffi::SQLITE_IOERR_DATA;
            }
        }
        rc
    }
}

// The methods that pass through: each calls the underlying file's own.

unsafe extern "C" fn x_close(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: the underlying file is open; closing it is the last use.
    unsafe {
        match methods(file).xClose {
            Some(close) => close(real(file)),
            None => ffi::SQLITE_OK,
        }
    }
}

/// A method that calls the underlying file's own, or answers `$none` when
/// that file has none (a panic must not cross into SQLite).
macro_rules! pass {
    ($name:ident, $field:ident, ($($arg:ident: $ty:ty),*) -> $ret:ty, $none:expr) => {
        unsafe extern "C" fn $name(file: *mut ffi::sqlite3_file $(, $arg: $ty)*) -> $ret {
            // SAFETY: the underlying file is open.
            unsafe {
                match methods(file).$field {
                    Some(m) => m(real(file) $(, $arg)*),
                    None => $none,
                }
            }
        }
    };
}

const IOERR: c_int = ffi::SQLITE_IOERR;
pass!(x_truncate, xTruncate, (size: ffi::sqlite3_int64) -> c_int, IOERR);
pass!(x_sync, xSync, (flags: c_int) -> c_int, IOERR);
pass!(x_file_size, xFileSize, (size: *mut ffi::sqlite3_int64) -> c_int, IOERR);
pass!(x_lock, xLock, (level: c_int) -> c_int, IOERR);
pass!(x_unlock, xUnlock, (level: c_int) -> c_int, IOERR);
pass!(x_check_reserved_lock, xCheckReservedLock, (out: *mut c_int) -> c_int, IOERR);
pass!(x_file_control, xFileControl, (op: c_int, arg: *mut c_void) -> c_int, ffi::SQLITE_NOTFOUND);
pass!(x_sector_size, xSectorSize, () -> c_int, 4096);
pass!(x_device_characteristics, xDeviceCharacteristics, () -> c_int, 0);
pass!(x_shm_map, xShmMap, (region: c_int, size: c_int, extend: c_int, pp: *mut *mut c_void) -> c_int, IOERR);
pass!(x_shm_lock, xShmLock, (offset: c_int, n: c_int, flags: c_int) -> c_int, IOERR);
pass!(x_shm_unmap, xShmUnmap, (delete: c_int) -> c_int, ffi::SQLITE_OK);
pass!(x_unfetch, xUnfetch, (offset: ffi::sqlite3_int64, p: *mut c_void) -> c_int, ffi::SQLITE_OK);

unsafe extern "C" fn x_shm_barrier(file: *mut ffi::sqlite3_file) {
    // SAFETY: as for the other pass-through methods.
    unsafe {
        if let Some(barrier) = methods(file).xShmBarrier {
            barrier(real(file));
        }
    }
}

static IO_METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 3,
    xClose: Some(x_close),
    xRead: Some(x_read),
    xWrite: Some(x_write),
    xTruncate: Some(x_truncate),
    xSync: Some(x_sync),
    xFileSize: Some(x_file_size),
    xLock: Some(x_lock),
    xUnlock: Some(x_unlock),
    xCheckReservedLock: Some(x_check_reserved_lock),
    xFileControl: Some(x_file_control),
    xSectorSize: Some(x_sector_size),
    xDeviceCharacteristics: Some(x_device_characteristics),
    xShmMap: Some(x_shm_map),
    xShmLock: Some(x_shm_lock),
    xShmBarrier: Some(x_shm_barrier),
    xShmUnmap: Some(x_shm_unmap),
    xFetch: Some(x_fetch),
    xUnfetch: Some(x_unfetch),
};

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::Store;

    /// A database of a few dozen pages, checkpointed into its file.
    fn filled(dir: &std::path::Path) -> std::path::PathBuf {
        let path = dir.join("index-1.db");
        let mut store = Store::create(&path).unwrap();
        store
            .write(|tx| {
                tx.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, text TEXT NOT NULL)")?;
                for i in 0..2_000 {
                    tx.execute(
                        "INSERT INTO t (text) VALUES (?1)",
                        [format!("row {i} of the table, long enough to fill pages")],
                    )?;
                }
                Ok(())
            })
            .unwrap();
        store.checkpoint();
        path
    }

    fn read_all(path: &std::path::Path) -> Result<usize, String> {
        let store = Store::open(path).map_err(|e| e.to_string())?;
        let n: i64 = store
            .connection()
            .query_row("SELECT COUNT(*) FROM t WHERE text LIKE 'row %'", [], |r| {
                r.get(0)
            })
            .map_err(|e| e.to_string())?;
        Ok(n as usize)
    }

    #[test]
    fn a_new_database_reserves_its_checks_and_reads_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = filled(dir.path());
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[..16], MAGIC);
        assert_eq!(bytes[HEADER_RESERVE_AT], RESERVE);
        let page = u16::from_be_bytes([bytes[16], bytes[17]]) as usize;
        assert!(bytes.len() / page > 10, "{} pages", bytes.len() / page);
        for p in bytes.chunks(page) {
            assert!(page_ok(p), "a page written without its check");
        }
        assert_eq!(read_all(&path), Ok(2_000));
    }

    #[test]
    fn a_flipped_byte_in_any_page_fails_the_read_instead_of_changing_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = filled(dir.path());
        let clean = std::fs::read(&path).unwrap();
        let page = u16::from_be_bytes([clean[16], clean[17]]) as usize;
        // A byte inside a row's text: unchecked, it would read as another value.
        let at = clean
            .windows(9)
            .rposition(|w| w == b"row 1999 ")
            .expect("the last row is on disk")
            + 4;
        for (offset, label) in [(at, "a row's text"), (page + 8, "a b-tree page header")] {
            let mut bytes = clean.clone();
            bytes[offset] ^= 0x01;
            std::fs::write(&path, &bytes).unwrap();
            let err = read_all(&path).expect_err(label);
            // SQLite's own words from a query, lode's from an open.
            assert!(
                err.contains("disk I/O error") || err.contains("a page failed its check"),
                "{label}: {err}"
            );
        }
        std::fs::write(&path, &clean).unwrap();
        assert_eq!(read_all(&path), Ok(2_000));
    }

    #[test]
    fn the_checks_cover_what_the_memory_map_reads_too() {
        let dir = tempfile::tempdir().unwrap();
        let path = filled(dir.path());
        let mut bytes = std::fs::read(&path).unwrap();
        let at = bytes.windows(8).position(|w| w == b"row 100 ").unwrap() + 4;
        bytes[at] ^= 0x20;
        std::fs::write(&path, &bytes).unwrap();
        // The store maps the file (mmap_size): the page comes through xFetch.
        let store = Store::open(&path).unwrap();
        let mapped: i64 = store
            .connection()
            .query_row("PRAGMA mmap_size", [], |r| r.get(0))
            .unwrap();
        assert!(mapped > 0);
        let err = store
            .connection()
            .query_row("SELECT COUNT(*) FROM t WHERE text LIKE 'row %'", [], |r| {
                r.get::<_, i64>(0)
            })
            .unwrap_err();
        assert!(err.to_string().contains("I/O"), "{err}");
    }

    #[test]
    fn a_copy_whose_first_page_was_written_last_is_sealed_whole() {
        // VACUUM INTO with a small cache spills pages before page 1, while the
        // shim cannot yet know the copy's pages are checked.
        let dir = tempfile::tempdir().unwrap();
        let path = filled(dir.path());
        let store = Store::open(&path).unwrap();
        let copy = dir.path().join("copy.db");
        store
            .connection()
            .execute_batch(&format!(
                "PRAGMA cache_size = 2; VACUUM INTO '{}'",
                copy.display()
            ))
            .unwrap();
        drop(store);
        seal(&copy).unwrap();
        let bytes = std::fs::read(&copy).unwrap();
        let page = u16::from_be_bytes([bytes[16], bytes[17]]) as usize;
        for p in bytes.chunks(page) {
            assert!(page_ok(p), "a page of the copy without its check");
        }
        assert_eq!(read_all(&copy), Ok(2_000));
        // A database without the reserve is left as it is.
        let plain = dir.path().join("plain.db");
        rusqlite::Connection::open(&plain)
            .unwrap()
            .execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1)")
            .unwrap();
        let before = std::fs::read(&plain).unwrap();
        seal(&plain).unwrap();
        assert_eq!(std::fs::read(&plain).unwrap(), before);
    }

    #[test]
    fn a_direct_read_of_part_of_an_overflow_page_is_not_taken_for_a_page() {
        // SQLite reads a value's overflow pages straight from the file, from a
        // page's start for as many bytes as the value needs there: a read of
        // 512 bytes at a page's start is then part of a 1,024-byte page.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index-1.db");
        let vfs = vfs_name().expect("the shim registers on unix");
        let flags =
            rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_CREATE;
        let conn = rusqlite::Connection::open_with_flags_and_vfs(&path, flags, vfs).unwrap();
        conn.execute_batch("PRAGMA page_size = 1024").unwrap();
        reserve_on_create(&conn).unwrap();
        conn.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, a BLOB, b BLOB, c BLOB)")
            .unwrap();
        // `b` between values of every length: the record's overflow ends a
        // page, so one `b` ends 508 bytes into an overflow page, read as 512
        // bytes with the page's link.
        let overflow = 1024 - RESERVE as usize - 4;
        for n in 0..overflow {
            conn.execute(
                "INSERT INTO t (a, b, c) VALUES (?1, ?2, ?3)",
                rusqlite::params![vec![1u8; 700], vec![2u8; 1_500 + n], vec![3u8; n]],
            )
            .unwrap();
        }
        drop(conn);
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(u16::from_be_bytes([bytes[16], bytes[17]]), 1024);
        assert_eq!(bytes[HEADER_RESERVE_AT], RESERVE);
        let conn = rusqlite::Connection::open_with_flags_and_vfs(&path, flags, vfs).unwrap();
        let mut stmt = conn.prepare("SELECT b FROM t ORDER BY id").unwrap();
        let lengths: Vec<usize> = stmt
            .query_map([], |r| r.get::<_, Vec<u8>>(0))
            .unwrap()
            .map(|b| b.map(|b| b.len()))
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(lengths, (1_500..1_500 + overflow).collect::<Vec<_>>());
    }

    #[test]
    fn page_sums_detect_every_single_bit() {
        let mut page = vec![7u8; 4096];
        let sum = page_sum(&page);
        page[4092..].copy_from_slice(&sum);
        assert!(page_ok(&page));
        for bit in [0usize, 1, 4000 * 8, 4091 * 8 + 7, 4093 * 8] {
            let mut p = page.clone();
            p[bit / 8] ^= 1 << (bit % 8);
            assert!(!page_ok(&p), "bit {bit}");
        }
        assert!(page_ok(&[0u8; 4096]), "a page never written");
    }
}
