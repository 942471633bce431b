package blob

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	gcaws "gocloud.dev/aws"
	cblob "gocloud.dev/blob"
	"gocloud.dev/blob/s3blob"
)

// openS3 opens the bucket of an s3:// URL (its path already removed) as
// the s3blob URL opener does, taking the same query parameters
// (endpoint, region, use_path_style, disable_https, accelerate, ssetype,
// kmskeyid, and those of gocloud.dev/aws.V2ConfigFromURLParams), with one
// difference: the client does not log that it skipped checking a
// response's checksum. S3-compatible servers often send none, and
// multipart objects and ranged downloads have none to check, so the
// client would print a warning for most downloads; the store checks every
// file against the checksum in its manifest instead.
func openS3(ctx context.Context, u *url.URL) (*cblob.Bucket, error) {
	q := u.Query()
	var opts s3blob.Options
	var clientOpts []func(*s3.Options)
	if v := q.Get("ssetype"); v != "" {
		q.Del("ssetype")
		var ok bool
		for _, t := range types.ServerSideEncryptionAes256.Values() {
			if strings.EqualFold(string(t), v) {
				opts.EncryptionType, ok = t, true
			}
		}
		if !ok {
			return nil, fmt.Errorf("ssetype=%q: want one of %v", v, types.ServerSideEncryptionAes256.Values())
		}
	}
	if v := q.Get("kmskeyid"); v != "" {
		q.Del("kmskeyid")
		opts.KMSEncryptionID = v
	}
	for _, p := range []struct {
		name string
		set  func(*s3.Options, bool)
	}{
		{"accelerate", func(o *s3.Options, v bool) { o.UseAccelerate = v }},
		{"disable_https", func(o *s3.Options, v bool) { o.EndpointOptions.DisableHTTPS = v }},
		{"use_path_style", func(o *s3.Options, v bool) { o.UsePathStyle = v }},
		{"s3ForcePathStyle", func(o *s3.Options, v bool) { o.UsePathStyle = v }},
	} {
		raw := q.Get(p.name)
		if raw == "" {
			continue
		}
		q.Del(p.name)
		v, err := strconv.ParseBool(raw)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: want true or false", p.name, raw)
		}
		set := p.set
		clientOpts = append(clientOpts, func(o *s3.Options) { set(o, v) })
	}
	cfg, err := gcaws.V2ConfigFromURLParams(ctx, q)
	if err != nil {
		return nil, err
	}
	clientOpts = append(clientOpts, func(o *s3.Options) { o.DisableLogOutputChecksumValidationSkipped = true })
	client := s3.NewFromConfig(cfg, clientOpts...)
	// The upload manager takes the request checksum setting from the
	// bucket's options, not the client's.
	opts.RequestChecksumCalculation = cfg.RequestChecksumCalculation
	return s3blob.OpenBucket(ctx, client, u.Host, &opts)
}

// AbortIncomplete aborts every multipart upload under the store's prefix
// that was started and never completed nor aborted, and returns how many
// it aborted. A process killed in the middle of uploading a large file
// leaves such an upload behind: its parts are invisible to listings (so
// List and Delete cannot see them) but stay on the server, taking space,
// until aborted. It is for a resume's cleanup, before anything uploads:
// an upload of the store still running (in this or another process) is
// aborted too, and fails. For file:// and mem:// stores, which have no
// multipart uploads, it does nothing.
func (s *Store) AbortIncomplete(ctx context.Context) (int, error) {
	var client *s3.Client
	if !s.bucket.As(&client) {
		return 0, nil
	}
	aborted := 0
	var keyMarker, idMarker *string
	for {
		var out *s3.ListMultipartUploadsOutput
		err := s.do(ctx, "list incomplete uploads", func(ctx context.Context) error {
			var err error
			out, err = client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{
				Bucket: &s.bucketName, Prefix: &s.prefix, KeyMarker: keyMarker, UploadIdMarker: idMarker,
			})
			return err
		})
		if err != nil {
			return aborted, fmt.Errorf("abort incomplete uploads of %s: %w", s.url, err)
		}
		for _, up := range out.Uploads {
			if up.Key == nil || up.UploadId == nil || !strings.HasPrefix(*up.Key, s.prefix) {
				continue
			}
			err := s.do(ctx, "abort upload of "+*up.Key, func(ctx context.Context) error {
				_, err := client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
					Bucket: &s.bucketName, Key: up.Key, UploadId: up.UploadId,
				})
				var nsu *types.NoSuchUpload
				if errors.As(err, &nsu) {
					return nil // completed or aborted meanwhile
				}
				return err
			})
			if err != nil {
				return aborted, fmt.Errorf("abort incomplete uploads of %s: %w", s.url, err)
			}
			aborted++
		}
		if out.IsTruncated == nil || !*out.IsTruncated {
			return aborted, nil
		}
		keyMarker, idMarker = out.NextKeyMarker, out.NextUploadIdMarker
	}
}
