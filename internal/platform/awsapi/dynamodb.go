package awsapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Item is a DynamoDB item, or a key, or a set of expression values.
type Item map[string]AttributeValue

// AttributeValue is one DynamoDB attribute value: a string (S), number
// (N), binary (B), boolean (BOOL), null (NULL), map (M), list (L) or set
// (SS, NS, BS). Make one with S, N, Int, B, Bool, M or L; the zero value
// is no value and is not sent.
type AttributeValue struct {
	typ  string // "S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS"; "" for none
	str  string // S, N
	bin  []byte // B
	bool bool   // BOOL
	m    Item
	l    []AttributeValue
	ss   []string // SS, NS
	bs   [][]byte
}

// S returns a string value.
func S(s string) AttributeValue { return AttributeValue{typ: "S", str: s} }

// N returns a number value from its decimal text.
func N(n string) AttributeValue { return AttributeValue{typ: "N", str: n} }

// Int returns a number value.
func Int(n int64) AttributeValue { return N(strconv.FormatInt(n, 10)) }

// B returns a binary value.
func B(b []byte) AttributeValue { return AttributeValue{typ: "B", bin: b} }

// Bool returns a boolean value.
func Bool(b bool) AttributeValue { return AttributeValue{typ: "BOOL", bool: b} }

// M returns a map value.
func M(m Item) AttributeValue { return AttributeValue{typ: "M", m: m} }

// L returns a list value.
func L(l ...AttributeValue) AttributeValue { return AttributeValue{typ: "L", l: l} }

// Type returns the value's DynamoDB type ("S", "N", "B", "BOOL", "NULL",
// "M", "L", "SS", "NS", "BS"), or "" for the zero value.
func (v AttributeValue) Type() string { return v.typ }

// String returns an S value.
func (v AttributeValue) String() (string, bool) { return v.str, v.typ == "S" }

// Number returns an N value's decimal text.
func (v AttributeValue) Number() (string, bool) { return v.str, v.typ == "N" }

// Int64 returns an N value as an integer; ok is false for another type,
// and err is set for a number that is not an int64.
func (v AttributeValue) Int64() (n int64, ok bool, err error) {
	if v.typ != "N" {
		return 0, false, nil
	}
	n, err = strconv.ParseInt(v.str, 10, 64)
	return n, true, err
}

// Binary returns a B value.
func (v AttributeValue) Binary() ([]byte, bool) { return v.bin, v.typ == "B" }

// Boolean returns a BOOL value.
func (v AttributeValue) Boolean() (bool, bool) { return v.bool, v.typ == "BOOL" }

// Map returns an M value.
func (v AttributeValue) Map() (Item, bool) { return v.m, v.typ == "M" }

// List returns an L value.
func (v AttributeValue) List() ([]AttributeValue, bool) { return v.l, v.typ == "L" }

// wireValue is an attribute value as the JSON protocol writes it (read
// by UnmarshalJSON; MarshalJSON writes the same form by hand).
type wireValue struct {
	S    *string          `json:"S,omitempty"`
	N    *string          `json:"N,omitempty"`
	B    *[]byte          `json:"B,omitempty"`
	BOOL *bool            `json:"BOOL,omitempty"`
	NULL *bool            `json:"NULL,omitempty"`
	M    *Item            `json:"M,omitempty"`
	L    []AttributeValue `json:"L,omitempty"`
	SS   []string         `json:"SS,omitempty"`
	NS   []string         `json:"NS,omitempty"`
	BS   [][]byte         `json:"BS,omitempty"`
}

// MarshalJSON writes the item as {"<name>": {"<type>": ...}, ...}, names
// sorted, as encoding/json would, but in one pass: every request's item
// goes through here, and encoding/json would call each value's
// MarshalJSON and scan its output again.
func (m Item) MarshalJSON() ([]byte, error) {
	if m == nil {
		return []byte("null"), nil
	}
	return appendItem(make([]byte, 0, itemRoom(m)), m)
}

// MarshalJSON writes the value as {"<type>": ...}.
func (v AttributeValue) MarshalJSON() ([]byte, error) {
	return appendValue(nil, v)
}

// itemBinaryBytes is the base64 length of m's top-level binary values,
// so the encoder's buffer is sized once.
func itemBinaryBytes(m Item) int {
	n := 0
	for _, v := range m {
		if v.typ == "B" {
			n += base64.StdEncoding.EncodedLen(len(v.bin))
		}
	}
	return n
}

func appendItem(b []byte, m Item) ([]byte, error) {
	var err error
	b = appendMap(b, m, func(b []byte, v AttributeValue) []byte {
		if err == nil {
			b, err = appendValue(b, v)
		}
		return b
	})
	return b, err
}

func appendValue(b []byte, v AttributeValue) ([]byte, error) {
	var err error
	switch v.typ {
	case "S", "N":
		b = append(b, `{"`...)
		b = append(b, v.typ...)
		b = append(b, `":`...)
		b = appendJSONString(b, v.str)
	case "B":
		b = append(b, `{"B":`...)
		b = appendBase64(b, v.bin)
	case "BOOL":
		b = append(b, `{"BOOL":`...)
		b = strconv.AppendBool(b, v.bool)
	case "NULL":
		b = append(b, `{"NULL":true`...)
	case "M":
		b = append(b, `{"M":`...)
		if v.m == nil {
			b = append(b, "{}"...)
		} else {
			b, err = appendItem(b, v.m)
		}
	case "L":
		b = append(b, `{"L":`...)
		if v.l == nil {
			b = append(b, "[]"...) // as L() with no values is written
			break
		}
		b = appendList(b, v.l, func(b []byte, e AttributeValue) []byte {
			if err == nil {
				b, err = appendValue(b, e)
			}
			return b
		})
	case "SS", "NS":
		b = append(b, `{"`...)
		b = append(b, v.typ...)
		b = append(b, `":`...)
		b = appendList(b, v.ss, appendJSONString)
	case "BS":
		b = append(b, `{"BS":`...)
		b = appendList(b, v.bs, appendBase64)
	default:
		return nil, fmt.Errorf("awsapi: attribute value without a type")
	}
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads {"<type>": ...}.
func (v *AttributeValue) UnmarshalJSON(data []byte) error {
	if sv, ok := scalarValue(data); ok {
		*v = sv
		return nil
	}
	w, err := decodeWire(data)
	if err != nil {
		return err
	}
	*v = w
	return nil
}

// decodeWire decodes any attribute value with encoding/json.
func decodeWire(data []byte) (AttributeValue, error) {
	var w wireValue
	if err := json.Unmarshal(data, &w); err != nil {
		return AttributeValue{}, err
	}
	switch {
	case w.S != nil:
		return S(*w.S), nil
	case w.N != nil:
		return N(*w.N), nil
	case w.B != nil:
		return B(*w.B), nil
	case w.BOOL != nil:
		return Bool(*w.BOOL), nil
	case w.NULL != nil:
		return AttributeValue{typ: "NULL"}, nil
	case w.M != nil:
		return M(*w.M), nil
	case w.L != nil:
		return L(w.L...), nil
	case w.SS != nil:
		return AttributeValue{typ: "SS", ss: w.SS}, nil
	case w.NS != nil:
		return AttributeValue{typ: "NS", ss: w.NS}, nil
	case w.BS != nil:
		return AttributeValue{typ: "BS", bs: w.BS}, nil
	}
	return AttributeValue{}, fmt.Errorf("awsapi: unknown attribute value %.40s", data)
}

// scalarValue decodes a scalar value as DynamoDB writes one, with no
// space and no escape: {"S":"..."}, {"N":"..."}, {"B":"<base64>"},
// {"BOOL":true} or {"BOOL":false}, {"NULL":true}. It returns what
// encoding/json would decode into wireValue, or false for anything else,
// which UnmarshalJSON then leaves to encoding/json: a status item read
// back (a duplicate's claim, a lease) has a dozen values, and a second
// encoding/json pass over each cost more than the rest of its decoding.
func scalarValue(data []byte) (AttributeValue, bool) {
	rest, ok := bytes.CutPrefix(data, []byte(`{"`))
	if !ok || len(rest) == 0 || rest[len(rest)-1] != '}' {
		return AttributeValue{}, false
	}
	typ, val, ok := bytes.Cut(rest[:len(rest)-1], []byte(`":`))
	if !ok {
		return AttributeValue{}, false
	}
	switch string(typ) {
	case "S", "N", "B":
		s, ok := plainString(val)
		if !ok {
			return AttributeValue{}, false
		}
		switch typ[0] {
		case 'S':
			return S(string(s)), true
		case 'N':
			return N(string(s)), true
		}
		b := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
		n, err := base64.StdEncoding.Decode(b, s)
		if err != nil {
			return AttributeValue{}, false
		}
		return B(b[:n]), true
	case "BOOL":
		switch string(val) {
		case "true":
			return Bool(true), true
		case "false":
			return Bool(false), true
		}
	case "NULL":
		if string(val) == "true" {
			return AttributeValue{typ: "NULL"}, true
		}
	}
	return AttributeValue{}, false
}

// plainString returns the contents of the JSON string lit when it needs
// no unquoting: valid UTF-8 with no escape, quote or control character.
func plainString(lit []byte) ([]byte, bool) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return nil, false
	}
	s := lit[1 : len(lit)-1]
	for _, c := range s {
		if c < 0x20 || c == '"' || c == '\\' {
			return nil, false
		}
	}
	return s, utf8.Valid(s)
}

// ConsumedCapacity is the capacity an operation consumed, when asked with
// ReturnConsumedCapacity.
type ConsumedCapacity struct {
	TableName          string
	CapacityUnits      *float64 `json:",omitempty"`
	ReadCapacityUnits  *float64 `json:",omitempty"`
	WriteCapacityUnits *float64 `json:",omitempty"`
}

// Values of ReturnValues, ReturnValuesOnConditionCheckFailure and
// ReturnConsumedCapacity.
const (
	ReturnAllOld        = "ALL_OLD"
	ReturnAllNew        = "ALL_NEW"
	ReturnCapacityTotal = "TOTAL"
)

// PutItemInput is DynamoDB's PutItem request.
type PutItemInput struct {
	TableName                           string
	Item                                Item
	ConditionExpression                 string            `json:",omitempty"`
	ExpressionAttributeNames            map[string]string `json:",omitempty"`
	ExpressionAttributeValues           Item              `json:",omitempty"`
	ReturnValues                        string            `json:",omitempty"`
	ReturnValuesOnConditionCheckFailure string            `json:",omitempty"`
	ReturnConsumedCapacity              string            `json:",omitempty"`
}

// PutItemOutput is DynamoDB's PutItem answer.
type PutItemOutput struct {
	Attributes       Item
	ConsumedCapacity *ConsumedCapacity
}

// GetItemInput is DynamoDB's GetItem request.
type GetItemInput struct {
	TableName                string
	Key                      Item
	ConsistentRead           bool              `json:",omitempty"`
	ProjectionExpression     string            `json:",omitempty"`
	ExpressionAttributeNames map[string]string `json:",omitempty"`
	ReturnConsumedCapacity   string            `json:",omitempty"`
}

// GetItemOutput is DynamoDB's GetItem answer; Item is nil when there is none.
type GetItemOutput struct {
	Item             Item
	ConsumedCapacity *ConsumedCapacity
}

// UpdateItemInput is DynamoDB's UpdateItem request.
type UpdateItemInput struct {
	TableName                           string
	Key                                 Item
	UpdateExpression                    string            `json:",omitempty"`
	ConditionExpression                 string            `json:",omitempty"`
	ExpressionAttributeNames            map[string]string `json:",omitempty"`
	ExpressionAttributeValues           Item              `json:",omitempty"`
	ReturnValues                        string            `json:",omitempty"`
	ReturnValuesOnConditionCheckFailure string            `json:",omitempty"`
	ReturnConsumedCapacity              string            `json:",omitempty"`
}

// UpdateItemOutput is DynamoDB's UpdateItem answer.
type UpdateItemOutput struct {
	Attributes       Item
	ConsumedCapacity *ConsumedCapacity
}

// DeleteItemInput is DynamoDB's DeleteItem request.
type DeleteItemInput struct {
	TableName                           string
	Key                                 Item
	ConditionExpression                 string            `json:",omitempty"`
	ExpressionAttributeNames            map[string]string `json:",omitempty"`
	ExpressionAttributeValues           Item              `json:",omitempty"`
	ReturnValues                        string            `json:",omitempty"`
	ReturnValuesOnConditionCheckFailure string            `json:",omitempty"`
	ReturnConsumedCapacity              string            `json:",omitempty"`
}

// DeleteItemOutput is DynamoDB's DeleteItem answer.
type DeleteItemOutput struct {
	Attributes       Item
	ConsumedCapacity *ConsumedCapacity
}

// QueryInput is DynamoDB's Query request.
type QueryInput struct {
	TableName                 string
	IndexName                 string            `json:",omitempty"`
	KeyConditionExpression    string            `json:",omitempty"`
	FilterExpression          string            `json:",omitempty"`
	ExpressionAttributeNames  map[string]string `json:",omitempty"`
	ExpressionAttributeValues Item              `json:",omitempty"`
	ExclusiveStartKey         Item              `json:",omitempty"`
	Limit                     int32             `json:",omitempty"`
	ScanIndexForward          *bool             `json:",omitempty"`
	ConsistentRead            bool              `json:",omitempty"`
	ReturnConsumedCapacity    string            `json:",omitempty"`
}

// QueryOutput is DynamoDB's Query answer; LastEvaluatedKey is set when
// there are more pages.
type QueryOutput struct {
	Items            []Item
	Count            int32
	LastEvaluatedKey Item
	ConsumedCapacity *ConsumedCapacity
}

// DynamoDB makes DynamoDB's single-item operations and Query.
type DynamoDB struct{ c *Client }

// NewDynamoDB returns a DynamoDB client on c, a Client for DynamoDBService.
func NewDynamoDB(c *Client) *DynamoDB { return &DynamoDB{c: c} }

// DynamoDBFromConfig returns a DynamoDB client configured from cfg as the
// SDK's would be (FromConfig).
func DynamoDBFromConfig(cfg aws.Config) *DynamoDB {
	return NewDynamoDB(FromConfig(DynamoDBService, cfg))
}

// PutItem writes an item.
func (d *DynamoDB) PutItem(ctx context.Context, in *PutItemInput) (*PutItemOutput, error) {
	return call(ctx, d.c, "PutItem", in, &PutItemOutput{})
}

// GetItem reads an item.
func (d *DynamoDB) GetItem(ctx context.Context, in *GetItemInput) (*GetItemOutput, error) {
	return call(ctx, d.c, "GetItem", in, &GetItemOutput{})
}

// UpdateItem updates (or creates) an item.
func (d *DynamoDB) UpdateItem(ctx context.Context, in *UpdateItemInput) (*UpdateItemOutput, error) {
	return call(ctx, d.c, "UpdateItem", in, &UpdateItemOutput{})
}

// DeleteItem deletes an item.
func (d *DynamoDB) DeleteItem(ctx context.Context, in *DeleteItemInput) (*DeleteItemOutput, error) {
	return call(ctx, d.c, "DeleteItem", in, &DeleteItemOutput{})
}

// Query reads one page of a query; pass LastEvaluatedKey as the next
// input's ExclusiveStartKey for the next.
func (d *DynamoDB) Query(ctx context.Context, in *QueryInput) (*QueryOutput, error) {
	return call(ctx, d.c, "Query", in, &QueryOutput{})
}

func call[O any](ctx context.Context, c *Client, op string, in any, out *O) (*O, error) {
	if err := c.Call(ctx, op, in, out); err != nil {
		return nil, err
	}
	return out, nil
}
