//! The portable kernel: slicing-by-8 tables, always compiled, used where no hardware kernel
//! exists and forced by `CAIRN_CHECKSUM_IMPL=portable` so the test suite covers it everywhere.

/// Reflected CRC32C (Castagnoli) polynomial.
pub(crate) const CRC32C_POLY: u32 = 0x82F6_3B78;
/// Reflected CRC32 (IEEE 802.3, zlib) polynomial.
pub(crate) const CRC32_POLY: u32 = 0xEDB8_8320;

const fn make_tables(poly: u32) -> [[u32; 256]; 8] {
    let mut t = [[0u32; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { (c >> 1) ^ poly } else { c >> 1 };
            k += 1;
        }
        t[0][i] = c;
        i += 1;
    }
    let mut s = 1;
    while s < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = t[s - 1][i];
            t[s][i] = (prev >> 8) ^ t[0][(prev & 0xFF) as usize];
            i += 1;
        }
        s += 1;
    }
    t
}

static CRC32C_TABLES: [[u32; 256]; 8] = make_tables(CRC32C_POLY);
static CRC32_TABLES: [[u32; 256]; 8] = make_tables(CRC32_POLY);

fn update_with(t: &[[u32; 256]; 8], state: u32, data: &[u8]) -> u32 {
    let mut crc = state;
    let mut words = data.chunks_exact(8);
    for word in &mut words {
        let v = u64::from_le_bytes(word.try_into().expect("8 bytes")) ^ crc as u64;
        crc = t[7][(v & 0xFF) as usize]
            ^ t[6][((v >> 8) & 0xFF) as usize]
            ^ t[5][((v >> 16) & 0xFF) as usize]
            ^ t[4][((v >> 24) & 0xFF) as usize]
            ^ t[3][((v >> 32) & 0xFF) as usize]
            ^ t[2][((v >> 40) & 0xFF) as usize]
            ^ t[1][((v >> 48) & 0xFF) as usize]
            ^ t[0][(v >> 56) as usize];
    }
    for &b in words.remainder() {
        crc = (crc >> 8) ^ t[0][((crc ^ b as u32) & 0xFF) as usize];
    }
    crc
}

pub(crate) fn crc32c_update(state: u32, data: &[u8]) -> u32 {
    update_with(&CRC32C_TABLES, state, data)
}

pub(crate) fn crc32_update(state: u32, data: &[u8]) -> u32 {
    update_with(&CRC32_TABLES, state, data)
}
