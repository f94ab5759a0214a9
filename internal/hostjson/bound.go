package hostjson

// Allowances for what the host's re-serialisation can add to a value beyond
// its layout: a number re-printed as a double ("1e5" becomes "100000.0",
// at most 24 characters for any double), and a string read as a date in a
// longer form than written (an offset "+01" becomes "+00:00").
const (
	numberAllowance = 24
	stringAllowance = 8
)

// MaxSize is a cheap upper bound of Size for valid UTF-8 JSON as Go's
// encoding/json writes it (where Newtonsoft writes invalid UTF-8 as U+FFFD,
// which can be longer), in one pass without allocating: it adds the indentation each
// value gets, a space after each name, the number and date allowances, and
// the four bytes Newtonsoft's escape of U+0085 takes over its UTF-8. Go's
// own escapes (<, >, &, invalid UTF-8) are never shorter than Newtonsoft's.
func MaxSize(raw []byte) int {
	n, depth := len(raw), 0
	inString, escaped, inNumber := false, false, false
	open := false // the last byte opened a container
	for i, c := range raw {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			case c == 0xC2 && i+1 < len(raw) && raw[i+1] == 0x85:
				n += 4
			}
			continue
		}
		isDigit := c >= '0' && c <= '9'
		isNumberByte := isDigit || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
		// A number starts with '-' or a digit (the e of true and false is
		// not one).
		if isNumberByte && !inNumber && (isDigit || c == '-') {
			n += numberAllowance
		}
		inNumber = isNumberByte
		if open && c != '}' && c != ']' {
			n += 1 + 2*depth // the first member's line
		}
		open = false
		switch c {
		case '"':
			inString = true
			n += stringAllowance
		case '{', '[':
			depth++
			open = true
		case '}', ']':
			depth--
			if i > 0 && raw[i-1] != '{' && raw[i-1] != '[' {
				n += 1 + 2*depth
			}
		case ',':
			n += 1 + 2*depth
		case ':':
			n++
		}
	}
	return n
}
