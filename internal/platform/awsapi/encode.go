package awsapi

import (
	"encoding/base64"
	"slices"
	"strconv"
)

// appender is a request that writes its own JSON, the bytes encoding/json
// would write for it, without encoding/json's reflection and its second
// pass over each MarshalJSON's output: the requests a new webhook makes
// (the claim, the payload write, the message) do.
type appender interface {
	appendJSON(b []byte) ([]byte, error)
}

// object writes the members of a JSON object in the order given, as
// encoding/json writes a struct's fields.
type object struct {
	b   []byte
	err error
}

func (o *object) name(n string) {
	if len(o.b) > 0 && o.b[len(o.b)-1] != '{' {
		o.b = append(o.b, ',')
	}
	o.b = appendJSONString(o.b, n)
	o.b = append(o.b, ':')
}

// str writes a string member; omitEmpty leaves out "".
func (o *object) str(n, v string, omitEmpty bool) {
	if omitEmpty && v == "" {
		return
	}
	o.name(n)
	o.b = appendJSONString(o.b, v)
}

// int writes an integer member; omitEmpty leaves out 0.
func (o *object) int(n string, v int64, omitEmpty bool) {
	if omitEmpty && v == 0 {
		return
	}
	o.name(n)
	o.b = strconv.AppendInt(o.b, v, 10)
}

// item writes an Item member; omitEmpty leaves out an empty one.
func (o *object) item(n string, m Item, omitEmpty bool) {
	if (omitEmpty && len(m) == 0) || o.err != nil {
		return
	}
	o.name(n)
	if m == nil {
		o.b = append(o.b, "null"...)
		return
	}
	o.b, o.err = appendItem(o.b, m)
}

// names writes a map[string]string member, keys sorted, leaving out an
// empty one (every such field is omitempty).
func (o *object) names(n string, m map[string]string) {
	if len(m) == 0 {
		return
	}
	o.name(n)
	o.b = appendMap(o.b, m, appendJSONString)
}

// appendMap writes m as a JSON object, keys sorted as encoding/json sorts
// them, each value written by value.
func appendMap[V any](b []byte, m map[string]V, value func([]byte, V) []byte) []byte {
	var small [24]string
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = value(b, m[k])
	}
	return append(b, '}')
}

// appendList writes l as a JSON array (null when nil, as encoding/json
// writes a nil slice), each element written by elem.
func appendList[E any](b []byte, l []E, elem func([]byte, E) []byte) []byte {
	if l == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, e := range l {
		if i > 0 {
			b = append(b, ',')
		}
		b = elem(b, e)
	}
	return append(b, ']')
}

// appendBase64 writes bin as a JSON string of its base64, as encoding/json
// writes a []byte.
func appendBase64(b, bin []byte) []byte {
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, bin)
	return append(b, '"')
}

func (o *object) end() ([]byte, error) {
	if o.err != nil {
		return nil, o.err
	}
	return append(o.b, '}'), nil
}

func newObject(b []byte) *object { return &object{b: append(b, '{')} }

// conditional writes the members a conditional write's request ends
// with, in PutItemInput's and UpdateItemInput's order, and ends the object.
func (o *object) conditional(cond string, names map[string]string, values Item, returnValues, onFailure, capacity string) ([]byte, error) {
	o.str("ConditionExpression", cond, true)
	o.names("ExpressionAttributeNames", names)
	o.item("ExpressionAttributeValues", values, true)
	o.str("ReturnValues", returnValues, true)
	o.str("ReturnValuesOnConditionCheckFailure", onFailure, true)
	o.str("ReturnConsumedCapacity", capacity, true)
	return o.end()
}

// requestRoom is what a request needs beyond its items' room (itemRoom):
// names, expressions, options.
const requestRoom = 256

// itemRoom is about what m's JSON takes, so that a request's buffer is
// allocated once (an inline payload's base64 is most of a claim), not
// doubled three times.
func itemRoom(m Item) int { return 64*len(m) + itemBinaryBytes(m) }

func (in *PutItemInput) appendJSON(b []byte) ([]byte, error) {
	b = slices.Grow(b, requestRoom+len(in.TableName)+len(in.ConditionExpression)+itemRoom(in.Item)+itemRoom(in.ExpressionAttributeValues))
	o := newObject(b)
	o.str("TableName", in.TableName, false)
	o.item("Item", in.Item, false)
	return o.conditional(in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues,
		in.ReturnValues, in.ReturnValuesOnConditionCheckFailure, in.ReturnConsumedCapacity)
}

func (in *UpdateItemInput) appendJSON(b []byte) ([]byte, error) {
	b = slices.Grow(b, requestRoom+len(in.TableName)+len(in.UpdateExpression)+len(in.ConditionExpression)+itemRoom(in.Key)+itemRoom(in.ExpressionAttributeValues))
	o := newObject(b)
	o.str("TableName", in.TableName, false)
	o.item("Key", in.Key, false)
	o.str("UpdateExpression", in.UpdateExpression, true)
	return o.conditional(in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues,
		in.ReturnValues, in.ReturnValuesOnConditionCheckFailure, in.ReturnConsumedCapacity)
}

func (in *SendMessageInput) appendJSON(b []byte) ([]byte, error) {
	b = slices.Grow(b, requestRoom+len(in.QueueUrl)+len(in.MessageBody)+64*(len(in.MessageAttributes)+len(in.MessageSystemAttributes)))
	o := newObject(b)
	o.str("QueueUrl", in.QueueUrl, false)
	o.str("MessageBody", in.MessageBody, false)
	o.int("DelaySeconds", int64(in.DelaySeconds), true)
	o.attributes("MessageAttributes", in.MessageAttributes)
	o.attributes("MessageSystemAttributes", in.MessageSystemAttributes)
	return o.end()
}

// attributes writes a map of message attributes, names sorted, leaving out
// an empty one (both such fields are omitempty).
func (o *object) attributes(n string, m map[string]MessageAttributeValue) {
	if len(m) == 0 {
		return
	}
	o.name(n)
	o.b = appendMap(o.b, m, func(b []byte, v MessageAttributeValue) []byte {
		a := newObject(b)
		a.str("DataType", v.DataType, false)
		a.str("StringValue", v.StringValue, true)
		if len(v.BinaryValue) > 0 {
			a.name("BinaryValue")
			a.b = appendBase64(a.b, v.BinaryValue)
		}
		b, _ = a.end()
		return b
	})
}
