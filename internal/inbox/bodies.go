package inbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/hookinbox/hookinbox/webhook"
)

// BodyPrefix is the prefix of every object the inbox keeps in its bucket
// (template.yaml's BodyBucket): the functions' S3 permissions and the
// bucket's expiry rule name it.
const BodyPrefix = "inbox/"

// BodyObject returns the name of the object that keeps a payload of the
// event key over MaxPayloadBytes, whose PayloadSHA256 is sum: BodyPrefix,
// the key (path-escaped) and the hash. A payload that large fits neither
// the claim item nor a payload item; the claim item names its object
// (attribute payload_object). The same bytes always get the same name,
// and a read checks the bytes against the hash their name carries.
func BodyObject(key webhook.Key, sum string) string {
	return BodyPrefix + url.PathEscape(string(key)) + "/" + sum
}

// Conditions of the body store, checked with errors.Is.
var (
	// errNoBucket: a payload is, or must be, kept in S3, and the store
	// was made without a bucket (WithBodies).
	errNoBucket = errors.New("inbox: the payload is kept in S3 and no bucket is configured (BODY_BUCKET)")
	// errBodyMismatch: the object read back does not hold the bytes its
	// name's hash says.
	errBodyMismatch = errors.New("inbox: the stored body does not match the hash in its name")
	// ErrNoBodyLocation: a payload over MaxPayloadBytes is stored for an
	// item whose claim did not name an object for it (only a claim of
	// that payload does).
	ErrNoBodyLocation = errors.New("inbox: payload too large for an item, and its claim names no object")
)

// objectAPI lists the S3 calls the body store makes (*s3.Client).
type objectAPI interface {
	PutObject(context.Context, *s3.PutObjectInput, ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	GetObject(context.Context, *s3.GetObjectInput, ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	DeleteObject(context.Context, *s3.DeleteObjectInput, ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
}

// Bodies is where payloads too large for an item are kept: objects under
// BodyPrefix in one S3 bucket.
type Bodies struct {
	s3     objectAPI
	bucket string
}

// NewBodies returns the body store on bucket, using a ready client
// (s3.NewFromConfig).
func NewBodies(client objectAPI, bucket string) *Bodies {
	return &Bodies{s3: client, bucket: bucket}
}

// BodiesFor returns the body store on bucket with an S3 client of cfg,
// addressing the bucket in the path when pathStyle (local S3 servers);
// nil when bucket is empty.
func BodiesFor(cfg aws.Config, bucket string, pathStyle bool) *Bodies {
	if bucket == "" {
		return nil
	}
	return NewBodies(s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = pathStyle }), bucket)
}

// put writes raw as the object name. Writing it again writes the same
// bytes: the name carries their hash.
func (b *Bodies) put(ctx context.Context, name string, raw []byte) error {
	if b == nil {
		return errNoBucket
	}
	_, err := b.s3.PutObject(ctx, &s3.PutObjectInput{
		Bucket:        aws.String(b.bucket),
		Key:           aws.String(name),
		Body:          bytes.NewReader(raw),
		ContentLength: aws.Int64(int64(len(raw))),
		ContentType:   aws.String("application/octet-stream"),
	})
	if err != nil {
		return fmt.Errorf("put object %s: %w", name, err)
	}
	return nil
}

// maxObjectBytes bounds the buffer get sizes by an object's length: no
// body kept is larger than a Lambda request (6 MiB).
const maxObjectBytes = 6 << 20

// get reads the object name and checks it against the hash its name
// carries (BodyObject); a missing object is ErrNotFound.
func (b *Bodies) get(ctx context.Context, name string) ([]byte, error) {
	if b == nil {
		return nil, errNoBucket
	}
	out, err := b.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(name)})
	var api smithy.APIError
	if errors.As(err, &api) && (api.ErrorCode() == "NoSuchKey" || api.ErrorCode() == "NotFound") {
		return nil, fmt.Errorf("get object %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get object %s: %w", name, err)
	}
	defer out.Body.Close()
	// Read into one buffer of the object's size: a 6 MB body read by
	// growing a buffer would cost twice that again.
	buf := bytes.NewBuffer(make([]byte, 0, min(max(aws.ToInt64(out.ContentLength), 0), maxObjectBytes)+bytes.MinRead))
	if _, err := buf.ReadFrom(out.Body); err != nil {
		return nil, fmt.Errorf("get object %s: %w", name, err)
	}
	raw := buf.Bytes()
	if PayloadSHA256(raw) != path.Base(name) {
		return nil, fmt.Errorf("get object %s: %w", name, errBodyMismatch)
	}
	return raw, nil
}

// delete removes the object name; a missing one is no error.
func (b *Bodies) delete(ctx context.Context, name string) error {
	if b == nil {
		return errNoBucket
	}
	if _, err := b.s3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(name)}); err != nil {
		return fmt.Errorf("delete object %s: %w", name, err)
	}
	return nil
}
