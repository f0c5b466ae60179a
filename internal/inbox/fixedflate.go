package inbox

import (
	"encoding/binary"
	"math/bits"
)

// deflateFixed compresses src as one final DEFLATE block with the fixed
// Huffman codes (RFC 1951, 3.2.6: BTYPE 01), appending to dst, and
// reports false once the output would pass limit bytes. Any inflater
// reads it (compress/flate does), so inline payloads stay raw DEFLATE.
//
// It exists because compress/flate spends most of its time on a small
// payload building the block's dynamic Huffman tables, not finding
// repeats: on a 2.9 KB Stripe checkout flate.BestSpeed takes about 27 µs
// and this about 9 µs, at 0.44 of the raw size instead of 0.38
// (BenchmarkDeflate). The repeats are found as flate's fastest level
// finds them, greedily through one hash table of 4-byte sequences.
//
// src must be at most maxFixedInput bytes (every match distance then fits
// DEFLATE's 32 KiB window), or it reports false.
func deflateFixed(dst, src []byte, limit int) ([]byte, bool) {
	if len(src) > maxFixedInput {
		return nil, false
	}
	w := bitWriter{out: dst}
	w.put(1|1<<1, 3) // BFINAL 1, BTYPE 01
	// table holds, per hash of 4 bytes, 1 + the last position they
	// started at (0: none yet).
	var table [1 << fixedHashBits]uint16
	n, i := len(src), 0
	for i+4 <= n {
		if len(w.out) > limit {
			return nil, false
		}
		u := binary.LittleEndian.Uint32(src[i:])
		h := fixedHash(u)
		cand := int(table[h]) - 1
		table[h] = uint16(i + 1)
		if cand < 0 || binary.LittleEndian.Uint32(src[cand:]) != u {
			w.literal(src[i])
			i++
			continue
		}
		l := 4 + matchLen(src[cand+4:], src[i+4:min(n, i+maxMatch)])
		w.match(l, i-cand)
		// Index every other position the match covers, so later
		// repeats of its inside are found too.
		for j, end := i+1, min(i+l, n-3); j < end; j += 2 {
			table[fixedHash(binary.LittleEndian.Uint32(src[j:]))] = uint16(j + 1)
		}
		i += l
	}
	for ; i < n; i++ {
		w.literal(src[i])
	}
	w.put(fixedLit[endOfBlock].code, fixedLit[endOfBlock].len)
	w.flush()
	if len(w.out) > limit {
		return nil, false
	}
	return w.out, true
}

const (
	maxFixedInput = 32 << 10
	fixedHashBits = 12
	maxMatch      = 258
	endOfBlock    = 256
)

func fixedHash(u uint32) uint32 { return (u * 0x1e35a7bd) >> (32 - fixedHashBits) }

// matchLen is how many leading bytes of b equal a's (a is at least as
// long as b where it is read: the earlier copy runs on into the later).
func matchLen(a, b []byte) int {
	n := 0
	for len(b)-n >= 8 {
		if x := binary.LittleEndian.Uint64(a[n:]) ^ binary.LittleEndian.Uint64(b[n:]); x != 0 {
			return n + bits.TrailingZeros64(x)>>3
		}
		n += 8
	}
	for n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// huffCode is a Huffman code, its bits reversed as DEFLATE packs them.
type huffCode struct {
	code uint32
	len  uint8
}

// fixedLit and fixedDist are the fixed codes of RFC 1951, 3.2.6.
var fixedLit, fixedDist = fixedCodes()

func fixedCodes() (lit [288]huffCode, dist [30]huffCode) {
	rev := func(v uint32, n uint8) huffCode { return huffCode{bits.Reverse32(v) >> (32 - n), n} }
	for i := range lit {
		v := uint32(i)
		switch {
		case i < 144:
			lit[i] = rev(0x30+v, 8)
		case i < 256:
			lit[i] = rev(0x190+v-144, 9)
		case i < 280:
			lit[i] = rev(v-256, 7)
		default:
			lit[i] = rev(0xc0+v-280, 8)
		}
	}
	for i := range dist {
		dist[i] = rev(uint32(i), 5)
	}
	return lit, dist
}

// The length and distance codes' bases and extra bits (RFC 1951, 3.2.5).
var (
	lengthBase  = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lengthExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase    = [30]uint16{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra   = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
	// lengthCode[l-3] is the length code (less 257) of a match of l bytes.
	lengthCode = func() (t [maxMatch - 2]uint8) {
		for c := len(lengthBase) - 1; c >= 0; c-- {
			for l := int(lengthBase[c]); l <= maxMatch && t[l-3] == 0; l++ {
				t[l-3] = uint8(c)
			}
		}
		return t
	}()
)

// fixedLength[l-3] is the fixed code of a match of l bytes with its
// extra bits after it (at most 8 + 5 bits).
var fixedLength = func() (t [maxMatch - 2]huffCode) {
	for i := range t {
		l := i + 3
		c := lengthCode[i]
		lit := fixedLit[257+int(c)]
		t[i] = huffCode{lit.code | (uint32(l)-uint32(lengthBase[c]))<<lit.len, lit.len + lengthExtra[c]}
	}
	return t
}()

// distCode is the distance code of a match d bytes back (1 ≤ d ≤ 32768).
func distCode(d int) int {
	x := uint32(d - 1)
	if x < 4 {
		return int(x)
	}
	nb := uint32(bits.Len32(x) - 1)
	return int(2*nb + (x>>(nb-1))&1)
}

// bitWriter appends bits least significant first, as DEFLATE orders them.
type bitWriter struct {
	out  []byte
	acc  uint64
	nacc uint8
}

// put appends the n low bits of v (n ≤ 32).
func (w *bitWriter) put(v uint32, n uint8) {
	w.acc |= uint64(v) << w.nacc
	w.nacc += n
	if w.nacc >= 32 {
		w.out = binary.LittleEndian.AppendUint32(w.out, uint32(w.acc))
		w.acc >>= 32
		w.nacc -= 32
	}
}

func (w *bitWriter) literal(b byte) { w.put(fixedLit[b].code, fixedLit[b].len) }

// match appends a match's length and distance codes with their extra
// bits, at most 31 bits in all (8 + 5 for the length, 5 + 13 for the
// distance), in one put.
func (w *bitWriter) match(length, distance int) {
	lc := fixedLength[length-3]
	dc := distCode(distance)
	dist := uint32(fixedDist[dc].code) | (uint32(distance)-uint32(distBase[dc]))<<5
	w.put(lc.code|dist<<lc.len, lc.len+5+distExtra[dc])
}

// flush writes the bits still held, the last byte padded with zeros.
func (w *bitWriter) flush() {
	for w.nacc > 0 {
		w.out = append(w.out, byte(w.acc))
		w.acc >>= 8
		w.nacc -= min(w.nacc, 8)
	}
}
